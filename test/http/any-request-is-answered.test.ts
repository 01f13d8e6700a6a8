import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { Client } from '../helpers/client.js';
import { differences, observed } from '../helpers/compare.js';
import { csrfPair } from '../helpers/fuzz-requests.js';
import { exchange, pipeline, type RawRequest } from '../helpers/raw-http.js';
import { addUser, startServer, testSecret, type TestServer } from '../helpers/server.js';
import { aroundSessionChecks, mintSession } from '../helpers/sessions.js';

/** A sign-out form post with `cookies`, the CSRF token posted back beside its cookie. */
const signOutWith = (target: TestServer, cookies: string, csrfToken: string) =>
  exchange(
    portOf(target),
    post(
      target,
      '/api/auth/signout',
      [['Cookie', cookies]],
      'application/x-www-form-urlencoded',
      `csrfToken=${csrfToken}`,
    ),
  );

// One example per class of failure the fuzz tests (test/**/*.generated.test.ts) found, fixed at the
// mechanism: these keep each class fixed in plain words.

const password = 'correct horse battery staple';
const day = 86400_000;

function portOf(server: TestServer): number {
  return Number(new URL(server.url).port);
}

function get(server: TestServer, target: string, headers: [string, string][] = []): RawRequest {
  return {
    method: 'GET',
    target,
    headers: [['Host', new URL(server.url).host], ...headers, ['Connection', 'close']],
  };
}

function post(
  server: TestServer,
  target: string,
  headers: [string, string][],
  contentType: string,
  body: string,
): RawRequest {
  return {
    method: 'POST',
    target,
    headers: [
      ['Host', new URL(server.url).host],
      ...headers,
      ['Content-Type', contentType],
      ['Connection', 'close'],
    ],
    body,
  };
}

describe('a callbackUrl the service cannot use is treated as absent', () => {
  let server: TestServer;
  let ada: { id: string; email: string; name: string };
  beforeAll(async () => {
    server = await startServer();
    const id = await addUser(server, 'ada@example.com', password, 'Ada');
    ada = { id, email: 'ada@example.com', name: 'Ada' };
  });
  afterAll(() => server.close());

  // Not an http(s) URL, names no host, or settles on something no Location header can carry:
  // Auth.js answered 500 ("server configuration") for these in a query or cookie.
  const unusable = ['foo', ' ', '..', 'javascript:alert(1)', '//', '/\u6f22\u5b57', '/x\u0001y'];

  it.each(unusable)('%j in the query of a session, CSRF or page read: 200', async (value) => {
    for (const path of [
      '/api/auth/session',
      '/api/auth/csrf',
      '/api/auth/providers',
      '/api/auth/signin',
      '/api/auth/signout',
    ]) {
      const target = `${path}?callbackUrl=${encodeURIComponent(value)}`;
      const response = await exchange(portOf(server), get(server, target));
      expect(response.status, target).toBe(200);
    }
  });

  it.each(unusable)(
    '%j as the callback-url cookie: 200, and the cookie re-set to the origin',
    async (value) => {
      for (const path of ['/api/auth/session', '/api/auth/csrf', '/api/auth/signin']) {
        const cookie = `authjs.callback-url=${encodeURIComponent(value)}`;
        const response = await exchange(portOf(server), get(server, path, [['Cookie', cookie]]));
        expect(response.status, path).toBe(200);
        const callback = response.cookies.find((c) => c.startsWith('authjs.callback-url='));
        expect(callback?.split(';')[0]).toBe(
          `authjs.callback-url=${encodeURIComponent(server.url)}`,
        );
      }
    },
  );

  it('a usable callbackUrl in the query wins over an unusable cookie, as over any cookie', async () => {
    const response = await exchange(
      portOf(server),
      get(server, '/api/auth/csrf?callbackUrl=%2Fdashboard', [
        ['Cookie', 'authjs.callback-url=javascript%3Aalert(1)'],
      ]),
    );
    expect(response.status).toBe(200);
    expect(response.cookies.find((c) => c.startsWith('authjs.callback-url='))).toContain(
      encodeURIComponent(`${server.url}/dashboard`),
    );
  });

  it('sign-in with an unusable callbackUrl field signs in and lands on the origin', async () => {
    for (const callbackUrl of ['foo', '/\u6f22\u5b57']) {
      const client = new Client(server.url);
      const csrfToken = await client.csrfToken();
      const response = await client.postForm('/api/auth/callback/credentials', {
        csrfToken,
        email: 'ada@example.com',
        password,
        callbackUrl,
      });
      expect(response.status).toBe(302);
      expect(response.headers.get('location')).toBe(server.url);
      expect(await client.session()).toMatchObject({ user: { email: 'ada@example.com' } });
    }
  });

  it.each([
    ['form', 'application/x-www-form-urlencoded'],
    ['JSON', 'application/json'],
  ])(
    'sign-out (%s) with a valid CSRF pair, a poisonous callback-url cookie and callbackUrl field still ends the session',
    async (_kind, contentType) => {
      for (const [cookieValue, field] of [
        ['javascript:alert(1)', 'foo'],
        [' ', '//'],
        ['foo', '/x\u0001y'],
      ] as const) {
        const { token } = await mintSession(server, ada, { secret: testSecret });
        const csrf = 'a'.repeat(64);
        const fields = { csrfToken: csrf, callbackUrl: field };
        const body =
          contentType === 'application/json'
            ? JSON.stringify(fields)
            : new URLSearchParams(fields).toString();
        const cookies = [
          `authjs.session-token=${token}`,
          `authjs.csrf-token=${encodeURIComponent(csrfPair(csrf, [testSecret]))}`,
          `authjs.callback-url=${encodeURIComponent(cookieValue)}`,
        ].join('; ');
        const response = await exchange(
          portOf(server),
          post(
            server,
            `/api/auth/signout?callbackUrl=${encodeURIComponent(field)}`,
            [['Cookie', cookies]],
            contentType,
            body,
          ),
        );
        expect(response.status).toBe(302);
        expect(response.headers.location).toBe(server.url);
        const copy = await exchange(
          portOf(server),
          get(server, '/api/auth/session', [['Cookie', `authjs.session-token=${token}`]]),
        );
        expect(copy.body.toString()).toBe('null');
      }
    },
  );
});

describe('sign-out ends every session the request holds a token for', () => {
  let server: TestServer;
  let ada: { id: string; email: string; name: string };
  beforeAll(async () => {
    server = await startServer();
    const id = await addUser(server, 'ada@example.com', password, 'Ada');
    ada = { id, email: 'ada@example.com', name: 'Ada' };
  });
  afterAll(() => server.close());

  it.each([
    [
      'a stray chunk before it',
      (token: string) => `authjs.session-token.0=garbage; authjs.session-token=${token}`,
    ],
    [
      'a stray chunk after it',
      (token: string) => `authjs.session-token=${token}; authjs.session-token.1=x`,
    ],
    [
      'a look-alike name beside it',
      (token: string) => `authjs.session-tokenX=y; authjs.session-token=${token}`,
    ],
  ])('a valid session cookie with %s', async (_name, jar) => {
    const { token } = await mintSession(server, ada, { secret: testSecret });
    const csrf = 'c'.repeat(64);
    const cookies = `${jar(token)}; authjs.csrf-token=${encodeURIComponent(csrfPair(csrf, [testSecret]))}`;
    const response = await signOutWith(server, cookies, csrf);
    expect(response.status).toBe(302);
    const copy = await exchange(
      portOf(server),
      get(server, '/api/auth/session', [['Cookie', `authjs.session-token=${token}`]]),
    );
    expect(copy.body.toString()).toBe('null');
  });

  it('without a valid CSRF token, nothing is signed out', async () => {
    const { token } = await mintSession(server, ada, { secret: testSecret });
    const cookies = `authjs.session-token.0=garbage; authjs.session-token=${token}; authjs.csrf-token=${encodeURIComponent(csrfPair('d'.repeat(64), [testSecret]))}`;
    await signOutWith(server, cookies, 'e'.repeat(64));
    const copy = await exchange(
      portOf(server),
      get(server, '/api/auth/session', [['Cookie', `authjs.session-token=${token}`]]),
    );
    expect(JSON.parse(copy.body.toString())).toMatchObject({ user: { email: 'ada@example.com' } });
  });
});

describe.each([
  {
    site: 'over http',
    authUrl: undefined,
    name: 'authjs.session-token',
    csrf: 'authjs.csrf-token',
  },
  {
    site: 'over https',
    authUrl: 'https://gatehouse.test',
    name: '__Secure-authjs.session-token',
    csrf: '__Host-authjs.csrf-token',
  },
])(
  'a valid session cookie wins over cookies planted beside it $site',
  ({ authUrl, name, csrf }) => {
    // Auth.js joins every cookie whose name starts with the session cookie's into the token; a
    // sibling subdomain can plant one with `Domain=`. A stray made the session read `null` and
    // cleared the real cookie.
    let server: TestServer;
    let ada: { id: string; email: string; name: string };
    beforeAll(async () => {
      server = await startServer({ config: { authUrl } });
      const id = await addUser(server, 'ada@example.com', password, 'Ada');
      ada = { id, email: 'ada@example.com', name: 'Ada' };
    });
    afterAll(() => server.close());

    const planted: [string, (token: string) => string][] = [
      ['a stray .9 chunk after it', (t) => `${name}=${t}; ${name}.9=x`],
      ['a stray .0 chunk before it', (t) => `${name}.0=garbage; ${name}=${t}`],
      ['a look-alike name (tokenX)', (t) => `${name}X=y; ${name}=${t}`],
      [
        'many strays, some of them empty',
        (t) => `${name}.1=a; ${name}.0=; ${name}-other=b; ${name}=${t}; ${name}.10=c; ${name}.2=`,
      ],
      ['a stray chunk holding the same valid token', (t) => `${name}.1=${t}; ${name}=${t}`],
    ];

    const mint = async () =>
      (await mintSession(server, ada, { secret: testSecret, salt: name })).token;
    const readWith = (cookie: string, target = '/api/auth/session') =>
      exchange(portOf(server), get(server, target, [['Cookie', cookie]]));
    /** Set-Cookie lines that delete the session cookie itself. */
    const deletions = (cookies: string[]) =>
      cookies.filter(
        (c) => c.startsWith(`${name}=;`) || (c.startsWith(`${name}=`) && /Max-Age=0/.test(c)),
      );

    it.each(planted)(
      'with %s, the session reads as its user and the cookie is kept',
      async (_kind, jar) => {
        const token = await mint();
        // In front of the routes (fast paths on), and through Auth.js (a query string).
        for (const target of ['/api/auth/session', '/api/auth/session?x=1']) {
          const response = await readWith(jar(token), target);
          expect(response.status, target).toBe(200);
          expect(JSON.parse(response.body.toString()), target).toMatchObject({
            user: { id: ada.id, email: 'ada@example.com' },
          });
          expect(deletions(response.cookies), target).toEqual([]);
        }
      },
    );

    it.each(planted)('with %s, signing in again ends the session held', async (_kind, jar) => {
      const token = await mint();
      const csrfToken = 'f'.repeat(64);
      const cookies = `${jar(token)}; ${csrf}=${encodeURIComponent(csrfPair(csrfToken, [testSecret]))}`;
      const response = await exchange(
        portOf(server),
        post(
          server,
          '/api/auth/callback/credentials',
          [['Cookie', cookies]],
          'application/x-www-form-urlencoded',
          new URLSearchParams({ csrfToken, email: 'ada@example.com', password }).toString(),
        ),
      );
      expect(response.status).toBe(302);
      expect(response.cookies.some((c) => c.startsWith(`${name}=ey`))).toBe(true);
      const old = await readWith(`${name}=${token}`);
      expect(old.body.toString()).toBe('null');
    });

    it.each(planted)(
      'with %s, sign-out ends the session and clears the cookie',
      async (_kind, jar) => {
        const token = await mint();
        const csrfToken = 'e'.repeat(64);
        const cookies = `${jar(token)}; ${csrf}=${encodeURIComponent(csrfPair(csrfToken, [testSecret]))}`;
        const response = await signOutWith(server, cookies, csrfToken);
        expect(response.status).toBe(302);
        expect(deletions(response.cookies)).toHaveLength(1);
        const copy = await readWith(`${name}=${token}`);
        expect(copy.body.toString()).toBe('null');
      },
    );

    it('a real chunked session, with no whole cookie, still reads as its user', async () => {
      const token = await mint();
      const response = await readWith(
        `${name}.1=${token.slice(300)}; ${name}.0=${token.slice(0, 300)}`,
      );
      expect(JSON.parse(response.body.toString())).toMatchObject({ user: { id: ada.id } });
    });

    it('a valid whole cookie beside chunks of another session: sign-out ends both', async () => {
      const token = await mint();
      const other = await mint();
      const csrfToken = 'd'.repeat(64);
      const cookies = [
        `${name}.0=${other.slice(0, 300)}`,
        `${name}=${token}`,
        `${name}.1=${other.slice(300)}`,
        `${csrf}=${encodeURIComponent(csrfPair(csrfToken, [testSecret]))}`,
      ].join('; ');
      const read = await readWith(cookies);
      expect(JSON.parse(read.body.toString())).toMatchObject({ user: { id: ada.id } });
      const response = await signOutWith(server, cookies, csrfToken);
      expect(response.status).toBe(302);
      for (const held of [token, other]) {
        expect((await readWith(`${name}=${held}`)).body.toString()).toBe('null');
      }
    });
  },
);

describe('request targets are served as the route they reach, or refused with a 4xx', () => {
  let server: TestServer;
  let client: Client;
  beforeAll(async () => {
    server = await startServer();
    await addUser(server, 'ada@example.com', password, 'Ada');
    client = new Client(server.url);
    await client.signIn('ada@example.com', password);
  });
  afterAll(() => server.close());

  it.each([
    ['a percent-encoded session path', '/api/auth/%73ession'],
    ['an absolute-form session target', 'ABSOLUTE/api/auth/session'],
  ])('%s reads the session', async (_name, target) => {
    const response = await exchange(
      portOf(server),
      get(server, target.replace('ABSOLUTE', server.url), [['Cookie', client.cookieHeader()]]),
    );
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body.toString())).toMatchObject({
      user: { email: 'ada@example.com' },
    });
  });

  it.each([
    ['a percent-encoded path', '/api/auth/%70roviders'],
    ['an absolute-form target', 'ABSOLUTE/api/auth/providers'],
    ['a percent-encoded CSRF path', '/api/auth/%63srf'],
  ])('%s is answered as the route', async (_name, target) => {
    const response = await exchange(
      portOf(server),
      get(server, target.replace('ABSOLUTE', server.url)),
    );
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/json');
  });

  it('the login-CSRF check applies to a percent-encoded sign-in target too', async () => {
    const attacker = new Client(server.url);
    const csrfToken = await attacker.csrfToken();
    const response = await exchange(
      portOf(server),
      post(
        server,
        '/api/auth/callback/%63redentials',
        [
          ['Cookie', attacker.cookieHeader()],
          ['Origin', 'https://evil.example'],
        ],
        'application/x-www-form-urlencoded',
        new URLSearchParams({ csrfToken, email: 'ada@example.com', password }).toString(),
      ),
    );
    expect(response.status).toBe(403);
    expect(JSON.parse(response.body.toString())).toMatchObject({ error: { code: 'cross_site' } });
  });

  it.each(['DELETE', 'PUT', 'OPTIONS', 'PROPFIND', 'PURGE'])(
    '%s on a known path gets the same 405 and Allow however the target spells the path',
    async (method) => {
      for (const [route, allow] of [
        ['/api/health', 'GET, HEAD'],
        ['/api/auth/session', 'GET, POST, HEAD'],
      ] as const) {
        const encoded = route.replace(/\/([a-z])([a-z]*)$/, (_m, c: string, rest: string) => {
          return `/%${c.charCodeAt(0).toString(16)}${rest}`;
        });
        for (const target of [route, encoded, `${server.url}${route}`]) {
          const response = await exchange(portOf(server), {
            ...get(server, target),
            method,
          });
          expect(response.status, `${method} ${target}`).toBe(405);
          expect(response.headers.allow, `${method} ${target}`).toBe(allow);
        }
      }
    },
  );

  it.each([
    '//api/auth/session',
    '/api//auth/session',
    '/api/auth/./session',
    '/api/auth/x/../session',
    '/api/auth/session;x',
    '/api/auth%2Fsession',
  ])('%s is a 404', async (target) => {
    const response = await exchange(portOf(server), get(server, target));
    expect(response.status).toBe(404);
  });

  it('CONNECT is answered 405 in the catalogue shape, and the connection closed', async () => {
    const response = await exchange(portOf(server), {
      method: 'CONNECT',
      target: 'evil.example:443',
      headers: [['Host', 'evil.example:443']],
    });
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe('GET, HEAD, POST');
    expect(response.headers.connection).toBe('close');
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(JSON.parse(response.body.toString())).toMatchObject({
      error: { code: 'method_not_allowed' },
    });
  });

  it('an expectation other than 100-continue is ignored: the usual answer, with its headers', async () => {
    for (const [target, status] of [
      ['/api/health', 200],
      ['/api/auth/session', 200],
      ['/api/nothing-here', 404],
    ] as const) {
      const response = await exchange(portOf(server), get(server, target, [['Expect', 'foo']]));
      expect(response.status, target).toBe(status);
      expect(response.headers['x-content-type-options'], target).toBe('nosniff');
      expect(response.headers['content-type'], target).toMatch(/^application\/json/);
    }
  });
});

describe('pipelined requests on one connection', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it('one that expects 100-continue behind another gets its answer whole, in order', async () => {
    const first = post(
      server,
      '/api/auth/signin/credentials',
      [],
      'application/x-www-form-urlencoded',
      '',
    );
    const waiting: RawRequest = {
      method: 'GET',
      target: '/api/auth/error',
      headers: [
        ['Host', new URL(server.url).host],
        ['Expect', '100-continue'],
        ['Connection', 'close'],
      ],
    };
    const kept = { ...first, headers: first.headers.filter(([name]) => name !== 'Connection') };
    const [a, b] = await pipeline(portOf(server), [kept, waiting]);
    expect(a?.status).toBe(302);
    expect(b?.status).toBe(200);
    // Before: "HTTP/1.1 100 Continue" sat between the head and the body, inside the body.
    expect(b?.body.toString()).toMatch(/^<!DOCTYPE html>/);
    expect(b?.body.toString()).not.toContain('100 Continue');
  });
});

describe("Auth.js's error page", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it('naming a configuration error is served with 200, not a 500 any client could ask for', async () => {
    const response = await exchange(
      portOf(server),
      get(server, '/api/auth/error?error=Configuration'),
    );
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    expect(response.body.toString()).toContain('Server error');
  });

  it('keeps its other statuses', async () => {
    const response = await exchange(
      portOf(server),
      get(server, '/api/auth/error?error=AccessDenied'),
    );
    expect(response.status).toBe(403);
  });
});

describe('behind a trusted proxy, the forwarded protocol is http or https', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ config: { trustProxy: ['127.0.0.1'] } });
  });
  afterAll(() => server.close());

  it('any other word is a 400, not an origin of "null" and a 500', async () => {
    for (const path of [
      '/api/auth/csrf',
      '/api/auth/session?callbackUrl=%2Fx',
      '/api/auth/signin',
    ]) {
      const response = await exchange(
        portOf(server),
        get(server, path, [['X-Forwarded-Proto', 'gopher']]),
      );
      expect(response.status, path).toBe(400);
      expect(JSON.parse(response.body.toString())).toMatchObject({
        error: { code: 'bad_request' },
      });
    }
  });

  it('https is honoured: the __Host- CSRF cookie', async () => {
    const response = await exchange(
      portOf(server),
      get(server, '/api/auth/csrf', [['X-Forwarded-Proto', 'https']]),
    );
    expect(response.status).toBe(200);
    expect(response.cookies.some((c) => c.startsWith('__Host-authjs.csrf-token='))).toBe(true);
  });
});

describe('the fast path reads cookies and tokens exactly as Auth.js does', () => {
  let fast: TestServer;
  let plain: TestServer;
  let token: string;
  const authUrl = 'http://gatehouse.test';
  beforeAll(async () => {
    fast = await startServer({ config: { fastPaths: true, authUrl } });
    plain = await startServer({
      config: { fastPaths: false, authUrl },
      databaseUrl: `file:${fast.dir}/test.db`,
    });
    const id = await addUser(fast, 'ada@example.com', password, 'Ada');
    token = (
      await mintSession(
        fast,
        { id, email: 'ada@example.com', name: 'Ada' },
        {
          secret: testSecret,
        },
      )
    ).token;
  });
  afterAll(async () => {
    await plain.close();
    await fast.close();
  });
  afterEach(() => vi.useRealTimers());

  async function both(target: string, cookie: string) {
    // Two days on: the session's refresh is due on both sides (no documented difference).
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 2 * day });
    const request: RawRequest = {
      method: 'GET',
      target,
      headers: [
        ['Host', 'gatehouse.test'],
        ['Cookie', cookie],
        ['Connection', 'close'],
      ],
    };
    const a = observed(await exchange(portOf(fast), request));
    const b = observed(await exchange(portOf(plain), request));
    vi.useRealTimers();
    expect(differences(a, b)).toEqual([]);
    return a;
  }

  it('a CSRF cookie wrapped in no-break spaces is not vouched for: a new one is set', async () => {
    const held = encodeURIComponent(csrfPair('b'.repeat(64), [testSecret]));
    const a = await both('/api/auth/csrf', `authjs.csrf-token=\u00a0${held}\u00a0`);
    expect(a.cookies.some((c) => c.startsWith('authjs.csrf-token=<csrf>'))).toBe(true);
  });

  it('a callback-url cookie wrapped in no-break spaces is settled as Auth.js settles it', async () => {
    await both('/api/auth/session', 'authjs.callback-url=\u00a0%2F\u00a0');
  });

  it.each([
    ['padding on the IV', (t: string) => t.replace(/^([^.]*\.\.[^.]*)/, '$1%3D%3D')],
    [
      'a space inside the ciphertext',
      (t: string) => t.replace(/^([^.]*\.\.[^.]*\.[^.]{8})/, '$1 '),
    ],
  ])('a session token with %s reads as the session on both', async (_name, change) => {
    const a = await both('/api/auth/session', `authjs.session-token=${change(token)}`);
    expect(JSON.parse(a.body)).toMatchObject({ user: { email: 'ada@example.com' } });
  });

  it('a percent-encoded session path answers as the session route on both', async () => {
    const a = await both('/api/auth/%73ession', `authjs.session-token=${token}`);
    expect(JSON.parse(a.body)).toMatchObject({ user: { email: 'ada@example.com' } });
  });
});

describe('a session read whose store fails is tried once, and answered 503', () => {
  let server: TestServer;
  let failing = false;
  let reads = 0;
  let client: Client;
  beforeAll(async () => {
    server = await startServer({
      wrap: (deps) => ({
        ...deps,
        sessions: aroundSessionChecks(deps.sessions, () => {
          reads += 1;
          if (failing) throw new Error('injected store failure');
        }),
      }),
    });
    await addUser(server, 'ada@example.com', password, 'Ada');
    client = new Client(server.url);
    await client.signIn('ada@example.com', password);
  });
  afterAll(() => server.close());
  afterEach(() => {
    failing = false;
  });

  it.each([
    ['answered in front of the routes (fast paths on)', '/api/auth/session'],
    ['with a query string, through Auth.js', '/api/auth/session?x=1'],
  ])('%s', async (_name, target) => {
    failing = true;
    reads = 0;
    const response = await exchange(
      portOf(server),
      get(server, target, [['Cookie', client.cookieHeader()]]),
    );
    expect(response.status).toBe(503);
    expect(response.headers['retry-after']).toBe('5');
    expect(JSON.parse(response.body.toString())).toMatchObject({ error: { code: 'unavailable' } });
    expect(reads).toBe(1);
  });
});
