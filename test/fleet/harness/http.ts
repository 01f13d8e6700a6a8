// HTTP for the fleet: every request on its own connection (`Connection: close`), so a result
// is the server's answer, never a client's keep-alive race with a server closing an idle
// connection; and a small cookie-jar client that speaks Auth.js's CSRF dance.
//
// Not test/helpers/client.ts's fetch-based Client: fetch keeps connections alive and rejects
// when no answer comes, where the fleet's load must record every failure as a result (status
// 0) and see which instances nginx tried. The cookie jar is that client's own.
import http, { type IncomingHttpHeaders } from 'node:http';
import { sessionCookieName, storeSetCookies } from '../../helpers/client.ts';

export { sessionCookieName };

export interface Answer {
  /** 0 when no answer came; `error` says why. */
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** The fleet nginx's `X-Fleet-Upstream` header: the instances nginx tried, in order. */
  upstream: string;
  error?: string;
}

export interface RequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs?: number;
}

/** One request; never rejects. */
export function request(
  url: string,
  { method = 'GET', headers = {}, body, timeoutMs = 10_000 }: RequestOptions = {},
): Promise<Answer> {
  return new Promise((resolve) => {
    const req = http.request(
      url,
      { method, headers: { connection: 'close', ...headers }, agent: false },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
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

/** The parsed JSON, or undefined when the text is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** A field of a JSON object answer, or undefined (not JSON, not an object, no such field). */
export function field(value: unknown, name: string): unknown {
  return typeof value === 'object' && value !== null
    ? (value as Record<string, unknown>)[name]
    : undefined;
}

/** The email of an Auth.js session answer (`{ user: { email } }`), or undefined. */
export const sessionEmailOf = (body: unknown): unknown => field(field(body, 'user'), 'email');

/** `signed-in`, Auth.js's error code (`credentials`, `rate_limited`, …), or `failed`. */
export type SignInOutcome = string;

/** What a session read gave: the email, `null` (no session), or undefined (not a session answer). */
export type Read = string | null | undefined;

/** A browser-like client against one base URL: one cookie jar, no redirects followed. */
export class Client {
  readonly baseUrl: string;
  readonly cookies: Map<string, string>;

  constructor(baseUrl: string, cookies: ReadonlyMap<string, string> = new Map()) {
    this.baseUrl = baseUrl;
    this.cookies = new Map(cookies);
  }

  /** The same cookies, sent somewhere else: a cookie copied to another instance. */
  at(baseUrl: string): Client {
    return new Client(baseUrl, this.cookies);
  }

  store(response: Answer): void {
    storeSetCookies(this.cookies, response.headers['set-cookie'] ?? []);
  }

  async send(path: string, init: RequestOptions = {}): Promise<Answer> {
    const headers = { ...init.headers };
    if (this.cookies.size > 0) {
      headers.cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    }
    const response = await request(`${this.baseUrl}${path}`, { ...init, headers });
    this.store(response);
    return response;
  }

  postForm(
    path: string,
    fields: Record<string, string>,
    headers: Record<string, string> = {},
  ): Promise<Answer> {
    return this.send(path, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(fields).toString(),
    });
  }

  /** A CSRF token (and its cookie), or undefined when the answer was not one. */
  async csrfToken(): Promise<{ response: Answer; token: string | undefined }> {
    const response = await this.send('/api/auth/csrf');
    const token = field(parseJson(response.body), 'csrfToken');
    return { response, token: typeof token === 'string' ? token : undefined };
  }

  /**
   * Sign-in, JSON variant. `outcome` is `signed-in`, Auth.js's error `code` (`credentials`,
   * `rate_limited`, …), or `failed` (no answer, 5xx, an answer of another shape).
   */
  async signIn(
    email: string,
    password: string,
  ): Promise<{ outcome: SignInOutcome; response: Answer }> {
    const csrf = await this.csrfToken();
    if (csrf.token === undefined) return { outcome: 'failed', response: csrf.response };
    const response = await this.postForm(
      '/api/auth/callback/credentials',
      { csrfToken: csrf.token, email, password },
      { 'x-auth-return-redirect': '1' },
    );
    const url = field(parseJson(response.body), 'url');
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
  async sessionEmail(): Promise<{ email: Read; response: Answer }> {
    const response = await this.send('/api/auth/session');
    const body = response.status === 200 ? parseJson(response.body) : undefined;
    if (body === null) return { email: null, response };
    return { email: sessionEmailOf(body) as Read, response };
  }

  async signOut(): Promise<Answer> {
    const csrf = await this.csrfToken();
    return this.postForm(
      '/api/auth/signout',
      { csrfToken: csrf.token ?? '' },
      { 'x-auth-return-redirect': '1' },
    );
  }
}
