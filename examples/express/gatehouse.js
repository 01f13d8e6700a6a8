import http from 'node:http';

// Where Gatehouse listens, as this server reaches it.
export const gatehouseUrl = process.env.GATEHOUSE_URL ?? 'http://127.0.0.1:3000';

/**
 * Express handler that passes a request to Gatehouse unchanged and streams the answer back:
 * status, headers (Set-Cookie and Location included) and body. Mounted before any body parser,
 * so the body is still unread. It sets X-Forwarded-For to the visitor's address (set, never
 * appended) and X-Forwarded-Proto; Gatehouse believes them from the addresses in TRUST_PROXY.
 */
export function forwardToGatehouse(req, res) {
  const headers = { ...req.headers };
  delete headers.connection;
  headers['x-forwarded-for'] = req.socket.remoteAddress ?? '';
  headers['x-forwarded-proto'] = req.protocol;
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
  upstream.on('error', () => {
    if (res.headersSent) res.destroy();
    else res.status(502).type('text').send('Gatehouse is not reachable');
  });
  req.pipe(upstream);
}

/**
 * Asks Gatehouse whose session the request's cookie holds: null as soon as the session was
 * signed out or revoked, or the user disabled or removed. One loopback round trip. When the
 * session's refresh is due (once a day), Gatehouse answers with a new cookie: passed on.
 */
export async function sessionFromGatehouse(req, res) {
  const response = await fetch(`${gatehouseUrl}/api/auth/session`, {
    headers: { cookie: req.headers.cookie ?? '' },
  });
  if (!response.ok) throw new Error(`Gatehouse answered the session read with ${response.status}`);
  for (const cookie of response.headers.getSetCookie()) res.append('Set-Cookie', cookie);
  return response.json();
}

/**
 * A CSRF token for a form that posts to Gatehouse (sign-in, sign-out). Gatehouse checks it
 * against its CSRF cookie, so a cookie it sets for this browser is passed on in the answer.
 */
export async function csrfToken(req, res) {
  const response = await fetch(`${gatehouseUrl}/api/auth/csrf`, {
    headers: { cookie: req.headers.cookie ?? '' },
  });
  if (!response.ok) throw new Error(`Gatehouse answered the CSRF read with ${response.status}`);
  for (const cookie of response.headers.getSetCookie()) res.append('Set-Cookie', cookie);
  const { csrfToken: token } = await response.json();
  return token;
}

/**
 * Posts to Gatehouse's account API (/api/account/*, JSON) from this server, for a form of the
 * app's own: with the browser's cookies (its session, and the CSRF cookie the form's page set)
 * and the form's CSRF token in `X-CSRF-Token`. A cookie Gatehouse sets (a password change gives
 * the session a new one) is passed on. Answers Gatehouse's JSON on success, else the message it
 * wrote for the person (a weak password, a wrong current password, too many requests).
 */
export async function postAccount(req, res, route, token, fields = {}) {
  const response = await fetch(`${gatehouseUrl}/api/account${route}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      cookie: req.headers.cookie ?? '',
      'x-csrf-token': token,
      'x-forwarded-for': req.socket.remoteAddress ?? '',
      'x-forwarded-proto': req.protocol,
    },
    body: JSON.stringify(fields),
  });
  for (const cookie of response.headers.getSetCookie()) res.append('Set-Cookie', cookie);
  const body = await response.json().catch(() => ({}));
  if (response.ok) return { ok: true, body };
  return { ok: false, message: body.error?.message ?? `Gatehouse answered ${response.status}.` };
}
