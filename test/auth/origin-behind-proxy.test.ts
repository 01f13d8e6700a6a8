import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csrfPair } from '../helpers/fuzz-requests.js';
import { exchange, type RawRequest } from '../helpers/raw-http.js';
import { addUser, startServer, testSecret, type TestServer } from '../helpers/server.js';
import { mintSession } from '../helpers/sessions.js';

// Behind a trusted proxy the origin is the Host header's, with X-Forwarded-Proto's scheme, as
// docs/operations.md's nginx block sets them. That block neither sets nor clears
// X-Forwarded-Host, so a client's own value reaches Gatehouse: it must pick nothing.

const host = 'app.example:8080';
const forged = 'evil.example';

function portOf(server: TestServer): number {
  return Number(new URL(server.url).port);
}

function request(
  method: string,
  target: string,
  headers: [string, string][],
  body?: { type: string; text: string },
): RawRequest {
  return {
    method,
    target,
    headers: [
      ['Host', host],
      ['X-Forwarded-Host', forged],
      ...headers,
      ...(body ? ([['Content-Type', body.type]] as [string, string][]) : []),
      ['Connection', 'close'],
    ],
    ...(body && { body: body.text }),
  };
}

describe('behind a trusted proxy, X-Forwarded-Host picks no origin', () => {
  let server: TestServer;
  let ada: { id: string; email: string; name: string };
  beforeAll(async () => {
    server = await startServer({ config: { trustProxy: ['127.0.0.1'] } });
    const id = await addUser(server, 'ada@example.com', 'correct horse battery staple', 'Ada');
    ada = { id, email: 'ada@example.com', name: 'Ada' };
  });
  afterAll(() => server.close());

  it.each([
    ['http', [], 'authjs.callback-url', 'http://app.example:8080'],
    [
      'https',
      [['X-Forwarded-Proto', 'https']],
      '__Secure-authjs.callback-url',
      'https://app.example:8080',
    ],
  ] as [string, [string, string][], string, string][])(
    'over %s the reads settle the callback URL on the Host header origin',
    async (_scheme, headers, cookieName, origin) => {
      for (const path of ['/api/auth/csrf', '/api/auth/session', '/api/auth/signin']) {
        const response = await exchange(portOf(server), request('GET', path, headers));
        expect(response.status, path).toBe(200);
        const callback = response.cookies.find((c) => c.startsWith(`${cookieName}=`));
        expect(callback?.split(';')[0], path).toBe(`${cookieName}=${encodeURIComponent(origin)}`);
        expect(response.body.toString(), path).not.toContain(forged);
      }
    },
  );

  it('a callbackUrl on the forwarded host is foreign: the origin is used instead', async () => {
    const target = `/api/auth/csrf?callbackUrl=${encodeURIComponent(`http://${forged}/x`)}`;
    const response = await exchange(portOf(server), request('GET', target, []));
    expect(response.status).toBe(200);
    const callback = response.cookies.find((c) => c.startsWith('authjs.callback-url='));
    expect(callback?.split(';')[0]).toBe(
      `authjs.callback-url=${encodeURIComponent(`http://${host}`)}`,
    );
  });

  it('sign-out redirects to the Host header origin', async () => {
    const { token } = await mintSession(server, ada, { secret: testSecret });
    const csrf = 'a'.repeat(64);
    const cookies = [
      `authjs.session-token=${token}`,
      `authjs.csrf-token=${encodeURIComponent(csrfPair(csrf, [testSecret]))}`,
    ].join('; ');
    const response = await exchange(
      portOf(server),
      request('POST', '/api/auth/signout', [['Cookie', cookies]], {
        type: 'application/x-www-form-urlencoded',
        text: `csrfToken=${csrf}`,
      }),
    );
    expect(response.status).toBe(302);
    expect(response.headers.location).toBe(`http://${host}`);
  });

  it('a post whose Origin is the forwarded host is cross-site', async () => {
    const response = await exchange(
      portOf(server),
      request('POST', '/api/auth/callback/credentials', [['Origin', `http://${forged}`]], {
        type: 'application/x-www-form-urlencoded',
        text: 'csrfToken=x&email=ada%40example.com&password=y',
      }),
    );
    expect(response.status).toBe(403);
    expect(JSON.parse(response.body.toString())).toMatchObject({ error: { code: 'cross_site' } });
  });
});
