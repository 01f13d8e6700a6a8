// HTTP for the fleet: every request on its own connection (`Connection: close`), so a result
// is the server's answer, never a client's keep-alive race with a server closing an idle
// connection; and a small cookie-jar client that speaks Auth.js's CSRF dance.
import http from 'node:http';

/**
 * One request; never rejects. `status` is 0 and `error` says why when no answer came.
 * `upstream` is the fleet nginx's `X-Fleet-Upstream` header: the instances nginx tried, in order.
 */
export function request(url, { method = 'GET', headers = {}, body, timeoutMs = 10_000 } = {}) {
  return new Promise((resolve) => {
    const req = http.request(
      url,
      { method, headers: { connection: 'close', ...headers }, agent: false },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: text,
            upstream: String(res.headers['x-fleet-upstream'] ?? ''),
          }),
        );
        res.on('error', (error) =>
          resolve({ status: 0, headers: {}, body: '', upstream: '', error: error.message }),
        );
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (error) =>
      resolve({ status: 0, headers: {}, body: '', upstream: '', error: error.message }),
    );
    req.end(body);
  });
}

export function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export const sessionCookieName = 'authjs.session-token';

/** A browser-like client against one base URL: one cookie jar, no redirects followed. */
export class Client {
  constructor(baseUrl, cookies = new Map()) {
    this.baseUrl = baseUrl;
    this.cookies = new Map(cookies);
  }

  /** The same cookies, sent somewhere else: a cookie copied to another instance. */
  at(baseUrl) {
    return new Client(baseUrl, this.cookies);
  }

  store(response) {
    for (const line of response.headers['set-cookie'] ?? []) {
      const [pair = '', ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a));
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  async send(path, init = {}) {
    const headers = { ...init.headers };
    if (this.cookies.size > 0) {
      headers.cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    }
    const response = await request(`${this.baseUrl}${path}`, { ...init, headers });
    this.store(response);
    return response;
  }

  postForm(path, fields, headers = {}) {
    return this.send(path, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(fields).toString(),
    });
  }

  /** A CSRF token (and its cookie), or undefined when the answer was not one. */
  async csrfToken() {
    const response = await this.send('/api/auth/csrf');
    return { response, token: parseJson(response.body)?.csrfToken };
  }

  /**
   * Sign-in, JSON variant. `outcome` is `signed-in`, Auth.js's error `code` (`credentials`,
   * `rate_limited`, …), or `failed` (no answer, 5xx, an answer of another shape).
   */
  async signIn(email, password) {
    const csrf = await this.csrfToken();
    if (csrf.token === undefined) return { outcome: 'failed', response: csrf.response };
    const response = await this.postForm(
      '/api/auth/callback/credentials',
      { csrfToken: csrf.token, email, password },
      { 'x-auth-return-redirect': '1' },
    );
    const url = parseJson(response.body)?.url;
    if ((response.status !== 200 && response.status !== 429) || typeof url !== 'string') {
      return { outcome: 'failed', response };
    }
    const code = new URL(url).searchParams.get('code');
    if (code !== null) return { outcome: code, response };
    return {
      outcome: this.cookies.has(sessionCookieName) ? 'signed-in' : 'failed',
      response,
    };
  }

  /** The session's email, `null` for no session, or undefined when the answer was not JSON. */
  async sessionEmail() {
    const response = await this.send('/api/auth/session');
    const body = response.status === 200 ? parseJson(response.body) : undefined;
    if (body === null) return { email: null, response };
    return { email: body?.user?.email, response };
  }

  async signOut() {
    const csrf = await this.csrfToken();
    return this.postForm(
      '/api/auth/signout',
      { csrfToken: csrf.token ?? '' },
      { 'x-auth-return-redirect': '1' },
    );
  }
}
