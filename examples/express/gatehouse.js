import http from 'node:http';

// Where Gatehouse listens, as this server reaches it.
export const gatehouseUrl = process.env.GATEHOUSE_URL ?? 'http://127.0.0.1:3000';

/** Gatehouse did not answer (not running, or out of reach): the app says so, with a 503. */
export class GatehouseDown extends Error {
  constructor(cause) {
    super(`Gatehouse (${gatehouseUrl}) is not answering`, { cause });
  }
}

/**
 * The visitor's address as this app sees it: `req.ip`, which honours Express's `trust proxy`
 * (off by default: the address that connected), an IPv4 address mapped into IPv6
 * (`::ffff:203.0.113.7`, from a server listening on `::`) given as IPv4.
 */
function clientAddress(req) {
  return (req.ip ?? '').replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/, '$1');
}

/**
 * What every request on a person's behalf tells Gatehouse about them: their device (the
 * browser's User-Agent) and network (X-Forwarded-For, set, never appended: Gatehouse believes
 * it from the addresses in TRUST_PROXY), for the account's history, its sessions and the
 * new-device notice; without them each would show this server ("node", 127.0.0.1).
 */
function visitor(req) {
  return {
    'user-agent': req.get('user-agent') ?? '',
    'x-forwarded-for': clientAddress(req),
    'x-forwarded-proto': req.protocol,
  };
}

/** `fetch` to Gatehouse for `req`'s visitor, with their cookies; GatehouseDown when it is down. */
async function askGatehouse(req, path, init = {}) {
  try {
    return await fetch(`${gatehouseUrl}${path}`, {
      ...init,
      headers: { ...init.headers, ...visitor(req), cookie: req.get('cookie') ?? '' },
    });
  } catch (error) {
    throw new GatehouseDown(error);
  }
}

/**
 * Express handler that passes a request to Gatehouse unchanged and streams the answer back:
 * status, headers (Set-Cookie and Location included) and body. Mounted before any body parser,
 * so the body is still unread. The visitor's User-Agent goes on as it came, X-Forwarded-For and
 * X-Forwarded-Proto are set as `visitor` says. Gatehouse out of reach: GatehouseDown, to the
 * app's error handler.
 */
export function forwardToGatehouse(req, res, next) {
  const headers = { ...req.headers, ...visitor(req) };
  delete headers.connection;
  const upstream = http.request(
    new URL(req.originalUrl, gatehouseUrl),
    { method: req.method, headers },
    (answer) => {
      const back = { ...answer.headers };
      delete back.connection;
      res.writeHead(answer.statusCode ?? 502, back);
      answer.pipe(res);
    },
  );
  upstream.on('error', (error) => {
    if (res.headersSent) res.destroy();
    else next(new GatehouseDown(error));
  });
  req.pipe(upstream);
}

/**
 * Asks Gatehouse whose session the request's cookie holds: null as soon as the session was
 * signed out or revoked, or the user disabled or removed. One loopback round trip. When the
 * session's refresh is due (once a day), Gatehouse answers with a new cookie: passed on.
 */
export async function sessionFromGatehouse(req, res) {
  const response = await askGatehouse(req, '/api/auth/session');
  if (!response.ok) throw new Error(`Gatehouse answered the session read with ${response.status}`);
  for (const cookie of response.headers.getSetCookie()) res.append('Set-Cookie', cookie);
  return response.json();
}

/**
 * A CSRF token for a form that posts to Gatehouse (sign-in, sign-out). Gatehouse checks it
 * against its CSRF cookie, so a cookie it sets for this browser is passed on in the answer.
 */
export async function csrfToken(req, res) {
  const response = await askGatehouse(req, '/api/auth/csrf');
  if (!response.ok) throw new Error(`Gatehouse answered the CSRF read with ${response.status}`);
  for (const cookie of response.headers.getSetCookie()) res.append('Set-Cookie', cookie);
  const { csrfToken: token } = await response.json();
  return token;
}

/**
 * The ways in Gatehouse offers besides the password, from `GET /api/auth/providers`: the
 * identity providers it is configured with (`{ id, name }`, a "Continue with …" button each) and
 * whether it signs in by e-mail (EMAIL_SIGNIN=on).
 */
export async function waysIn(req) {
  const response = await askGatehouse(req, '/api/auth/providers');
  if (!response.ok)
    throw new Error(`Gatehouse answered the providers read with ${response.status}`);
  const listed = Object.values(await response.json());
  return {
    providers: listed
      .filter((p) => p.type === 'oidc' || p.type === 'oauth')
      .map(({ id, name }) => ({ id, name })),
    email: listed.some((p) => p.type === 'email'),
  };
}

/**
 * Posts to Gatehouse's account API (/api/account/*, JSON) from this server, for a form of the
 * app's own: with the browser's cookies (its session, and the CSRF cookie the form's page set)
 * and the form's CSRF token in `X-CSRF-Token`. A cookie Gatehouse sets (a password change gives
 * the session a new one) is passed on. Answers Gatehouse's JSON on success, else the message it
 * wrote for the person (a weak password, a wrong current password or code, too many requests).
 */
export async function postAccount(req, res, route, token, fields = {}) {
  const response = await askGatehouse(req, `/api/account${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-csrf-token': token },
    body: JSON.stringify(fields),
  });
  for (const cookie of response.headers.getSetCookie()) res.append('Set-Cookie', cookie);
  const body = await response.json().catch(() => ({}));
  if (response.ok) return { ok: true, body };
  return { ok: false, message: body.error?.message ?? `Gatehouse answered ${response.status}.` };
}
