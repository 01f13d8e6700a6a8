/** Auth.js's session cookie over plain http (no `__Secure-` prefix). */
export const sessionCookieName = 'authjs.session-token';

/**
 * Applies `Set-Cookie` header lines to a cookie jar as a browser does: a cookie set to the
 * empty value or with `Max-Age=0` is removed.
 */
export function storeSetCookies(jar: Map<string, string>, lines: readonly string[]): void {
  for (const line of lines) {
    const [pair = '', ...attributes] = line.split(';');
    const eq = pair.indexOf('=');
    const name = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1).trim();
    const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a));
    if (expired || value === '') jar.delete(name);
    else jar.set(name, value);
  }
}

/**
 * A browser-like client: one cookie jar, no automatic redirects, real HTTP. (Written without
 * parameter properties: the fleet harness imports this file under Node's type stripping.)
 */
export class Client {
  readonly cookies = new Map<string, string>();
  readonly baseUrl: string;
  readonly defaultHeaders: Record<string, string>;

  constructor(baseUrl: string, defaultHeaders: Record<string, string> = {}) {
    this.baseUrl = baseUrl;
    this.defaultHeaders = defaultHeaders;
  }

  cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  store(response: Response): void {
    storeSetCookies(this.cookies, response.headers.getSetCookie());
  }

  async request(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    for (const [name, value] of Object.entries(this.defaultHeaders)) {
      if (!headers.has(name)) headers.set(name, value);
    }
    if (this.cookies.size > 0 && !headers.has('cookie')) headers.set('cookie', this.cookieHeader());
    const response = await fetch(`${this.baseUrl}${path}`, {
      ...init,
      headers,
      redirect: 'manual',
    });
    this.store(response);
    return response;
  }

  get(path: string, headers: Record<string, string> = {}): Promise<Response> {
    return this.request(path, { headers });
  }

  postForm(path: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
    return this.request(path, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(fields).toString(),
    });
  }

  async csrfToken(): Promise<string> {
    const response = await this.get('/api/auth/csrf');
    const body = (await response.json()) as { csrfToken: string };
    return body.csrfToken;
  }

  /** Sign-in as Auth.js clients do it, JSON variant (`X-Auth-Return-Redirect: 1`). */
  async signIn(
    email: string,
    password: string,
    path = '/api/auth/callback/credentials',
    extra: Record<string, string> = {},
  ): Promise<Response> {
    const csrfToken = await this.csrfToken();
    return this.postForm(
      path,
      { csrfToken, email, password, ...extra },
      { 'x-auth-return-redirect': '1' },
    );
  }

  async session(): Promise<unknown> {
    const response = await this.get('/api/auth/session');
    return response.json();
  }

  async signOut(): Promise<Response> {
    const csrfToken = await this.csrfToken();
    return this.postForm('/api/auth/signout', { csrfToken }, { 'x-auth-return-redirect': '1' });
  }

  sessionCookie(): string | undefined {
    return (
      this.cookies.get(sessionCookieName) ??
      this.cookies.get('__Secure-authjs.session-token') ??
      this.cookies.get('__Host-authjs.session-token')
    );
  }
}
