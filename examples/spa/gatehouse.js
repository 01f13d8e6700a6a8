// Every request this page makes to Gatehouse, on the page's own origin (the dev server's proxy
// or nginx forwards /api/auth/* and /api/account/* to Gatehouse). Each gives back what Gatehouse
// answered, refusals included; only a request that gets no answer at all (Gatehouse or the proxy
// down) throws, and app.js says so on the page. The session cookie is HttpOnly: this script never
// sees it, the browser sends it.

/** GET /api/auth/csrf: a token for the next post; Gatehouse sets its CSRF cookie alongside. */
async function csrfToken() {
  const response = await fetch('/api/auth/csrf');
  if (!response.ok) throw new Error(`the CSRF token's request answered ${response.status}`);
  const { csrfToken: token } = await response.json();
  return token;
}

/** GET /api/auth/session: null, or { user: { id, email, name }, expires }. */
export async function session() {
  const response = await fetch('/api/auth/session');
  if (!response.ok) throw new Error(`the session's request answered ${response.status}`);
  return response.json();
}

/**
 * GET /api/auth/providers: every way in Gatehouse is started with, by id:
 * { id, name, type, signinUrl, callbackUrl }, the URLs on Gatehouse's AUTH_URL.
 */
export async function providers() {
  const response = await fetch('/api/auth/providers');
  if (!response.ok) throw new Error(`the providers' list answered ${response.status}`);
  return response.json();
}

/**
 * POST /api/auth/<path> as Auth.js's own client posts, with `X-Auth-Return-Redirect: 1`:
 * Gatehouse answers 200 { url } instead of a redirect (and, after an enrolment, the recovery
 * codes beside it). Gives back { url, code, recoveryCodes }: `code` is null on success, else
 * the refusal's, from the url's `code=` (or `error=`), or from a JSON error answered before
 * Auth.js runs (403 `cross_site`: the post came from another origin than AUTH_URL's).
 */
async function postAuth(path, fields) {
  const response = await fetch(`/api/auth/${path}`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      'X-Auth-Return-Redirect': '1',
    },
    body: new URLSearchParams({ csrfToken: await csrfToken(), ...fields }),
  });
  const body = await response.json().catch(() => ({}));
  if (typeof body.url !== 'string')
    return { url: null, code: body.error?.code ?? `http_${response.status}`, recoveryCodes: [] };
  const answer = new URL(body.url, location.href).searchParams;
  const code = answer.get('error') ? (answer.get('code') ?? answer.get('error')) : null;
  return { url: body.url, code, recoveryCodes: body.recoveryCodes ?? [] };
}

/**
 * POST /api/auth/callback/credentials: `{ email, password }` first; after
 * `second_factor_required` only `{ otp }` or `{ recoveryCode }` (Gatehouse's short-lived
 * HttpOnly cookie stands for the right password); while enrolling, `{ otp, emailCode }`.
 */
export const signIn = (fields) => postAuth('callback/credentials', fields);

/** POST /api/auth/signin/<id>: the url to send the browser to, the provider's sign-in. */
export const signInWith = (providerId) =>
  postAuth(`signin/${providerId}`, { callbackUrl: location.href });

/** POST /api/auth/signin/email: the url of Gatehouse's "check your inbox" page. */
export const mailSignInLink = (email) =>
  postAuth('signin/email', { email, callbackUrl: location.href });

/** POST /api/auth/signout: clears the cookie and ends the session on Gatehouse. */
export const signOut = () => postAuth('signout', {});

/**
 * GET /api/auth/enrolment/totp (Gatehouse with SECOND_FACTOR=required), with the cookie the
 * refused password left: { secret, uri, qrSvg, codeSentTo }, the key of the authenticator app
 * this sign-in sets up and where the code was mailed (null without mail: an administrator's
 * code). Null when no enrolment waits (401: its five minutes passed, or it was used).
 */
export async function enrolmentKey() {
  const response = await fetch('/api/auth/enrolment/totp', { cache: 'no-store' });
  if (response.status === 401) return null;
  if (!response.ok) throw new Error(`the key for your app was not given (HTTP ${response.status})`);
  return response.json();
}

/** A typed code as Gatehouse takes it: six digits are the app's `otp`, else a `recoveryCode`. */
export function secondFactorFields(code) {
  const typed = code.trim();
  if (typed === '') return {};
  return /^\d{6}$/.test(typed) ? { otp: typed } : { recoveryCode: typed };
}

/**
 * POST /api/account/<route> (Gatehouse's account API, JSON) with the CSRF token in
 * `X-CSRF-Token`. Gives back { ok: true, body } or { ok: false, message }: Gatehouse writes the
 * message for the person (a weak password, a wrong current password, a code missing or wrong,
 * too many requests).
 */
export async function postAccount(route, fields = {}) {
  const response = await fetch(`/api/account${route}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': await csrfToken() },
    body: JSON.stringify(fields),
  });
  const body = await response.json().catch(() => ({}));
  if (response.ok) return { ok: true, body };
  return { ok: false, message: body.error?.message ?? `Gatehouse answered ${response.status}.` };
}
