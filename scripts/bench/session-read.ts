// The session read, the request an application sends most: `GET /api/auth/session` with the
// cookie jar a browser on the app's own origin holds after signing in, and without a cookie;
// and its sibling, `GET /api/auth/csrf`.
import { BenchError, email } from './common.ts';
import type { CookieJar } from './http.ts';
import type { Endpoint } from './wrk.ts';

export const unrelatedCookies = '_ga=GA1.1.123456789.1700000000; theme=dark; locale=en-GB';

/** What a browser on the app's own origin sends with every session poll. */
export function browserCookie(jar: CookieJar): string {
  return ['authjs.session-token', 'authjs.csrf-token', 'authjs.callback-url']
    .map((name) => {
      if (!jar.has(name)) throw new BenchError(`sign-in did not set the ${name} cookie`);
      return `${name}=${jar.get(name)}`;
    })
    .concat(unrelatedCookies)
    .join('; ');
}

/** The signed-in read: the answer must name the bench account. */
export const sessionJarEndpoint = (cookie: string): Endpoint => ({
  key: 'sessionJar',
  name: 'session (cookie jar)',
  path: '/api/auth/session',
  cookie,
  valid: (body) =>
    (JSON.parse(body) as { user?: { email?: string } } | null)?.user?.email === email,
});

/** The signed-in read over several sessions of the bench account, one per request in turn. */
export const sessionJarsEndpoint = (cookies: string[]): Endpoint => ({
  ...sessionJarEndpoint(cookies[0]),
  key: 'sessionJars',
  name: `session (cookie jar, ${cookies.length} sessions)`,
  cookies,
});

export const sessionNoneEndpoint: Endpoint = {
  key: 'sessionNone',
  name: 'session (no cookie)',
  path: '/api/auth/session',
  valid: (body) => JSON.parse(body) === null,
};

export const csrfEndpoint: Endpoint = {
  key: 'csrf',
  name: 'csrf',
  path: '/api/auth/csrf',
  valid: (body) => typeof (JSON.parse(body) as { csrfToken?: unknown }).csrfToken === 'string',
};
