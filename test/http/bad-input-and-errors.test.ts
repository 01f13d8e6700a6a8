import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../helpers/client.js';
import { addUser, countVerifications, startServer, type TestServer } from '../helpers/server.js';

const password = 'correct horse battery staple';
const uniformFail = (url: string) => ({
  url: `${url}/api/auth/signin?error=CredentialsSignin&code=credentials`,
});

interface ErrorBody {
  error: { code: string; message: string };
}

describe('bad input and error answers', () => {
  let server: TestServer;
  const counter = countVerifications();
  beforeAll(async () => {
    server = await startServer({ wrap: counter.wrap });
    await addUser(server, 'ada@example.com', password);
  });
  afterAll(() => server.close());

  it.each([
    ['GET', '/api/nothing-here', 404, 'not_found', undefined],
    ['GET', '/api/auth/unknown-action', 404, 'not_found', undefined],
    ['DELETE', '/api/health', 405, 'method_not_allowed', 'GET, HEAD'],
    ['PUT', '/api/auth/session', 405, 'method_not_allowed', 'GET, POST, HEAD'],
    ['OPTIONS', '/api/auth/csrf', 405, 'method_not_allowed', 'GET, HEAD'],
    ['GET', '/api/auth/callback/credentials', 405, 'method_not_allowed', 'POST'],
    ['GET', '/api/auth/signin/credentials', 405, 'method_not_allowed', 'POST'],
  ])('%s %s answers %i %s in the JSON error shape', async (method, path, status, code, allow) => {
    const response = await fetch(`${server.url}${path}`, { method });
    expect(response.status).toBe(status);
    expect(response.headers.get('allow') ?? undefined).toBe(allow);
    const body = (await response.json()) as ErrorBody;
    expect(body.error.code).toBe(code);
    expect(typeof body.error.message).toBe('string');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('TRACE is refused and never echoed', async () => {
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(new URL(server.url).port), '127.0.0.1', () => {
        socket.write(
          'TRACE /api/health HTTP/1.1\r\nHost: x\r\nX-Secret-Probe: echo-me\r\nConnection: close\r\n\r\n',
        );
      });
      let data = '';
      socket.on('data', (chunk) => (data += chunk.toString()));
      socket.on('end', () => resolve(data));
      socket.on('error', reject);
    });
    expect(raw).toMatch(/^HTTP\/1.1 405/);
    expect(raw).not.toContain('echo-me');
  });

  it.each([
    ['text/plain', 'email=a'],
    ['multipart/form-data; boundary=x', '--x--'],
    ['application/xml', '<a/>'],
  ])('a POST with Content-Type %s gets 415', async (type, body) => {
    const response = await fetch(`${server.url}/api/auth/callback/credentials`, {
      method: 'POST',
      headers: { 'content-type': type },
      body,
    });
    expect(response.status).toBe(415);
    expect(((await response.json()) as ErrorBody).error.code).toBe('unsupported_media_type');
  });

  it.each([
    ['application/x-www-form-urlencoded; charset=application/json', 'email=a%40b.co&password=x'],
    ['application/x-www-form-urlencoded; x="application/json"', 'email=a%40b.co'],
    ['APPLICATION/X-WWW-FORM-URLENCODED;Application/JSON', 'csrfToken=x'],
    ['application/json; charset=utf-8', 'email=a%40b.co'],
  ])(
    'a body Auth.js would read as JSON (Content-Type %s) is checked as JSON first: 400, never a 5xx',
    async (type, body) => {
      for (const path of ['/api/auth/callback/credentials', '/api/auth/signout']) {
        const response = await fetch(`${server.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': type },
          body,
        });
        expect(response.status).toBe(400);
        expect(((await response.json()) as ErrorBody).error.code).toBe('bad_request');
      }
    },
  );

  it.each([
    ['POST', '/api/nope', 'application/json', 404],
    ['PUT', '/api/health', 'application/json', 405],
    ['DELETE', '/api/auth/session', 'application/json', 405],
    ['POST', '/api/auth/signout', 'text/plain', 415],
    ['GET', '/api/auth/providers', 'application/json', 200],
  ])(
    '%s %s with a body it will not use is answered at once and the connection closed, the body unread',
    async (method, path, type, status) => {
      const started = Date.now();
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = net.connect(Number(new URL(server.url).port), '127.0.0.1', () => {
          // The 5,000 promised bytes never come: an answer that waited for them would hang.
          socket.write(
            `${method} ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: ${type}\r\nContent-Length: 5000\r\n\r\n`,
          );
        });
        let data = '';
        socket.on('data', (chunk) => (data += chunk.toString()));
        socket.on('close', () => resolve(data));
        socket.on('error', reject);
      });
      expect(answer).toMatch(new RegExp(`^HTTP/1.1 ${status} `));
      expect(answer.toLowerCase()).toContain('connection: close');
      expect(Date.now() - started).toBeLessThan(3000);
    },
  );

  it('a POST with no Content-Type gets 415', async () => {
    const response = await fetch(`${server.url}/api/auth/signout`, {
      method: 'POST',
      body: new Uint8Array([1, 2]),
    });
    expect(response.status).toBe(415);
  });

  it('a body over 16 KiB is refused with 413 and the connection closed', async () => {
    const response = await fetch(`${server.url}/api/auth/callback/credentials`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `password=${'a'.repeat(1024 * 1024)}`,
    });
    expect(response.status).toBe(413);
    expect(response.headers.get('connection')).toBe('close');
    expect(((await response.json()) as ErrorBody).error.code).toBe('payload_too_large');
  });

  it('a chunked body with no length is cut off at the cap with 413', async () => {
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        // Up to 100 MiB, but the server must stop it long before.
        if (sent >= 100 * 1024 * 1024) return controller.close();
        sent += 64 * 1024;
        controller.enqueue(new Uint8Array(64 * 1024).fill(97));
      },
    });
    const response = await fetch(`${server.url}/api/auth/callback/credentials`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(413);
    expect(sent).toBeLessThan(100 * 1024 * 1024);
  });

  it.each([
    ['malformed JSON', '{"email": '],
    ['a JSON array', '["x"]'],
    ['a JSON string', '"x"'],
    ['an object as email', '{"email":{"$ne":null},"password":"x","csrfToken":"t"}'],
    ['an array as password', '{"email":"a@x.io","password":["x"],"csrfToken":"t"}'],
    ['a number as password', '{"email":"a@x.io","password":12345678901234,"csrfToken":"t"}'],
    ['true as email', '{"email":true,"password":"x","csrfToken":"t"}'],
    ['null as password', '{"email":"a@x.io","password":null,"csrfToken":"t"}'],
    ['prototype pollution', '{"__proto__":{"isAdmin":true},"constructor":{"prototype":{"x":1}}}'],
    ['deep nesting', `${'['.repeat(5000)}${']'.repeat(5000)}`],
  ])('JSON with %s gets 400 before any hashing', async (_name, body) => {
    const before = counter.count();
    const response = await fetch(`${server.url}/api/auth/callback/credentials`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(response.status).toBe(400);
    const parsed = (await response.json()) as ErrorBody;
    expect(parsed.error.code).toBe('bad_request');
    expect(counter.count()).toBe(before);
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
  });

  it.each([
    ['a 10 000-character email', { email: `${'a'.repeat(9990)}@example.com`, password }],
    ['a 255-character email', { email: `${'a'.repeat(243)}@example.com`, password }],
    [
      'a 1 MiB-ish password under the body cap (4 KiB)',
      { email: 'ada@example.com', password: 'p'.repeat(4096) },
    ],
    ['a NUL byte in the email', { email: 'ada\u0000@example.com', password }],
    ['a missing password', { email: 'ada@example.com' }],
  ])('%s is the uniform failure with no hashing', async (_name, fields) => {
    const before = counter.count();
    const client = new Client(server.url);
    const csrfToken = await client.csrfToken();
    const response = await client.postForm(
      '/api/auth/callback/credentials',
      { csrfToken, ...fields },
      { 'x-auth-return-redirect': '1' },
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(uniformFail(server.url));
    expect(counter.count()).toBe(before);
  });

  it.each([
    ['a NUL byte cutting the password', `${password}\u0000rest`],
    ['SQL metacharacters', "' OR 1=1--"],
    ['a DROP TABLE attempt', '"; DROP TABLE users;--'],
    ['backslashes and wildcards', '\\\\%_'],
  ])('a password with %s is the uniform failure, and the tables stay intact', async (_name, pw) => {
    const client = new Client(server.url);
    const response = await client.signIn('ada@example.com', pw);
    expect(await response.json()).toEqual(uniformFail(server.url));
    expect(await server.services.users.count()).toBe(1);
  });

  it('with a repeated field the last value counts (documented)', async () => {
    const client = new Client(server.url);
    const csrfToken = await client.csrfToken();
    const body = new URLSearchParams([
      ['csrfToken', csrfToken],
      ['email', 'someone-else@example.com'],
      ['email', 'ada@example.com'],
      ['password', password],
    ]);
    const response = await client.request('/api/auth/callback/credentials', {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-auth-return-redirect': '1',
      },
      body: body.toString(),
    });
    expect(response.status).toBe(200);
    expect(await client.session()).toMatchObject({ user: { email: 'ada@example.com' } });
  });

  it('a foreign Origin is never reflected in CORS headers', async () => {
    for (const origin of ['https://evil.example', 'null']) {
      const response = await fetch(`${server.url}/api/auth/session`, { headers: { origin } });
      expect(response.headers.get('access-control-allow-origin')).toBeNull();
      expect(response.headers.get('access-control-allow-credentials')).toBeNull();
    }
  });
});
