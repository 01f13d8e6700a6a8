// The bench's HTTP client: a bare probe for start-up and liveness, fetch that turns a 5xx or a
// network error into a BenchError, cookies as a browser keeps them, and the CSRF + credentials
// sign-in a browser makes.
import http from 'node:http';
import { BenchError, email, password } from './common.ts';

/** A bare GET that never throws, for start-up polling: undici's pool would add its own latency. */
export function probe(url: string, timeoutMs = 1000): Promise<number | null> {
  return new Promise((resolve) => {
    const request = http.get(url, { agent: false }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? null));
      response.on('error', () => resolve(null));
    });
    request.on('error', () => resolve(null));
    request.setTimeout(timeoutMs, () => request.destroy());
  });
}

/** The cookies a browser keeps, by name. */
export type CookieJar = Map<string, string>;

/** The CSRF token and the cookie that goes with it, as a browser gets them. */
export interface Csrf {
  token: string;
  cookies: CookieJar;
}

export function cookiePairs(response: Response): CookieJar {
  const pairs: CookieJar = new Map();
  for (const line of response.headers.getSetCookie()) {
    const pair = line.split(';', 1)[0];
    const eq = pair.indexOf('=');
    if (eq > 0) pairs.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
  }
  return pairs;
}

export const cookieHeader = (pairs: CookieJar): string =>
  [...pairs].map(([name, value]) => `${name}=${value}`).join('; ');

export async function request(
  url: string,
  init: RequestInit = {},
): Promise<{ response: Response; body: string }> {
  let response: Response;
  try {
    response = await fetch(url, {
      redirect: 'manual',
      signal: AbortSignal.timeout(30_000),
      ...init,
    });
  } catch (error) {
    const failure = error as { message?: string; cause?: { message?: string } };
    throw new BenchError(
      `${init.method ?? 'GET'} ${url} failed: ${failure.cause?.message ?? failure.message}`,
    );
  }
  const body = await response.text();
  if (response.status >= 500) {
    throw new BenchError(
      `${init.method ?? 'GET'} ${url} answered ${response.status}: ${body.slice(0, 300)}`,
    );
  }
  return { response, body };
}

export async function getCsrf(base: string): Promise<Csrf> {
  const { response, body } = await request(`${base}/api/auth/csrf`);
  const token =
    response.status === 200 ? (JSON.parse(body) as { csrfToken?: unknown }).csrfToken : undefined;
  if (typeof token !== 'string') throw new BenchError(`csrf answered ${response.status}: ${body}`);
  return { token, cookies: cookiePairs(response) };
}

/** The form a browser posts to sign in, with the CSRF cookie and token it got first. */
export function credentialsInit(csrf: Csrf, login: string, secret: string): RequestInit {
  return {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-auth-return-redirect': '1',
      cookie: cookieHeader(csrf.cookies),
    },
    body: new URLSearchParams({ csrfToken: csrf.token, email: login, password: secret }).toString(),
  };
}

export function postCredentials(
  base: string,
  csrf: Csrf,
  login: string,
  secret: string,
): Promise<{ response: Response; body: string }> {
  return request(`${base}/api/auth/callback/credentials`, credentialsInit(csrf, login, secret));
}

/** One full browser-like sign-in (csrf, then post); returns every cookie the browser would hold. */
export async function signIn(base: string): Promise<CookieJar> {
  const csrf = await getCsrf(base);
  const { response, body } = await postCredentials(base, csrf, email, password);
  const jar = new Map([...csrf.cookies, ...cookiePairs(response)]);
  if (response.status !== 200 || body.includes('error=') || !jar.has('authjs.session-token')) {
    throw new BenchError(`sign-in failed: ${response.status} ${body.slice(0, 300)}`);
  }
  return jar;
}
