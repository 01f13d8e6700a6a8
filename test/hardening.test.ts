import net from 'node:net';
import { hash } from '@node-rs/argon2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from './helpers/client.js';
import { addUser, startServer, testSecret, type TestServer } from './helpers/server.js';

const password = 'correct horse battery staple';

describe('hardening', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ config: { requestTimeoutMs: 1000 } });
    await addUser(server, 'ada@example.com', password, 'Ada');
  });
  afterAll(() => server.close());

  it('a cross-site sign-in post is refused even with a valid token pair (login CSRF)', async () => {
    const attacker = new Client(server.url);
    const csrfToken = await attacker.csrfToken();
    const response = await attacker.postForm(
      '/api/auth/callback/credentials',
      { csrfToken, email: 'ada@example.com', password },
      { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
    );
    expect(response.status).toBe(403);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('cross_site');
    expect(attacker.sessionCookie()).toBeUndefined();
  });

  it.each([
    [{ origin: 'https://evil.example' }],
    [{ origin: 'null' }],
    [{ origin: `${'http://127.0.0.1'}:1` }],
    [{ 'sec-fetch-site': 'same-site' }],
    [{ 'sec-fetch-site': 'CROSS-SITE' }],
    [{ 'sec-fetch-site': 'Same-Site', origin: 'SAME' }],
  ])('a sign-in post with %j is refused with 403 cross_site (login CSRF)', async (headers) => {
    const attacker = new Client(server.url);
    const csrfToken = await attacker.csrfToken();
    const sent = Object.fromEntries(
      Object.entries(headers).map(([name, value]) => [name, value === 'SAME' ? server.url : value]),
    );
    for (const path of ['/api/auth/callback/credentials', '/api/auth/signin/credentials']) {
      const response = await attacker.postForm(
        path,
        { csrfToken, email: 'ada@example.com', password },
        sent,
      );
      expect(response.status).toBe(403);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
        'cross_site',
      );
    }
    expect(attacker.sessionCookie()).toBeUndefined();
  });

  it.each([
    [{ origin: 'SAME' }],
    [{ origin: 'SAME', 'sec-fetch-site': 'Same-Origin' }],
    [{ 'sec-fetch-site': 'none' }],
  ])("a sign-in post with %j from the service's own origin signs in", async (headers) => {
    const sent = Object.fromEntries(
      Object.entries(headers).map(([name, value]) => [name, value === 'SAME' ? server.url : value]),
    );
    const client = new Client(server.url, sent);
    expect((await client.signIn('ada@example.com', password)).status).toBe(200);
    expect(await client.session()).not.toBeNull();
  });

  it('same-origin posts with Sec-Fetch-Site still sign in', async () => {
    const client = new Client(server.url, { 'sec-fetch-site': 'same-origin' });
    expect((await client.signIn('ada@example.com', password)).status).toBe(200);
    expect(await client.session()).not.toBeNull();
  });

  it('NFC and NFD spellings of a password and an email reach one account', async () => {
    const nfc = 'caf\u00e9 au lait, s\u2019il vous pla\u00eet';
    await addUser(server, 'ren\u00e9@example.com', nfc);
    const client = new Client(server.url);
    await client.signIn('rene\u0301@example.com', nfc.normalize('NFD'));
    expect(await client.session()).toMatchObject({ user: { email: 'ren\u00e9@example.com' } });
  });

  it('no truncation: a prefix or an extension of an 80-byte password fails', async () => {
    const long = 'x'.repeat(40) + 'y'.repeat(40);
    await addUser(server, 'long@example.com', long);
    for (const attempt of [long.slice(0, 72), `${long}x`]) {
      const client = new Client(server.url);
      await client.signIn('long@example.com', attempt);
      expect(await client.session()).toBeNull();
    }
    const client = new Client(server.url);
    await client.signIn('long@example.com', long);
    expect(await client.session()).not.toBeNull();
  });

  it.each([
    ['64 code points', 'p'.repeat(64)],
    ['128 code points with emoji and spaces', `${'🔑 '.repeat(40)}${'q'.repeat(48)}`],
    ['leading and trailing spaces kept', '  spaced out password  '],
  ])('a password of %s is verified exactly', async (_name, pw) => {
    const email = `len${pw.length}@example.com`;
    await addUser(server, email, pw);
    const exact = new Client(server.url);
    await exact.signIn(email, pw);
    expect(await exact.session()).not.toBeNull();
    const trimmed = new Client(server.url);
    await trimmed.signIn(email, pw.trim() === pw ? `${pw} ` : pw.trim());
    expect(await trimmed.session()).toBeNull();
  });

  it('a weaker stored hash is upgraded to argon2id m=19456,t=2,p=1 on the next sign-in', async () => {
    const weak = await hash(password, {
      algorithm: 2,
      memoryCost: 4096,
      timeCost: 1,
      parallelism: 1,
    });
    const user = await server.services.users.create({
      email: 'old@example.com',
      name: 'Old',
      passwordHash: weak,
    });
    const client = new Client(server.url);
    await client.signIn('old@example.com', password);
    expect(await client.session()).not.toBeNull();
    const stored = await server.services.users.findById(user!.id);
    expect(stored?.passwordHash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    // The upgrade keeps the session it was made in.
    expect(await client.session()).not.toBeNull();
  });

  it('the same password for two users gives two different salted hashes', async () => {
    const a = await server.services.users.findByEmail('ada@example.com');
    await addUser(server, 'twin@example.com', password);
    const b = await server.services.users.findByEmail('twin@example.com');
    expect(a?.passwordHash).not.toBe(b?.passwordHash);
  });

  it('a client sending headers one byte at a time is dropped by the header timeout', async () => {
    const port = Number(new URL(server.url).port);
    const closed = await new Promise<number>((resolve) => {
      const started = Date.now();
      const socket = net.connect(port, '127.0.0.1', () =>
        socket.write('GET /api/health HTTP/1.1\r\nHost: x\r\n'),
      );
      const drip = setInterval(() => socket.write('X'), 200);
      socket.on('data', () => undefined);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        clearInterval(drip);
        resolve(Date.now() - started);
      });
    });
    // Timeout 1 s, checked every second: gone within about two.
    expect(closed).toBeLessThan(4000);
    expect((await fetch(`${server.url}/api/health`)).status).toBe(200);
  });

  /** Raw bytes in, the whole answer out (the server closes the connection). */
  function rawExchange(bytes: string, dripMs?: number): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(Number(new URL(server.url).port), '127.0.0.1', () => {
        if (dripMs === undefined) socket.write(bytes);
        else socket.write(bytes.slice(0, -4));
      });
      let data = '';
      socket.on('data', (chunk) => (data += chunk.toString()));
      socket.on('close', () => resolve(data));
      socket.on('error', reject);
    });
  }

  it.each([
    ['a malformed request line', 'GET /api/health HTTP/9\r\n\r\n', 400, 'bad_request'],
    [
      'a control byte in a header value',
      'GET /api/health HTTP/1.1\r\nHost: x\r\nX-A: a\u0001b\r\n\r\n',
      400,
      'bad_request',
    ],
    [
      'a Content-Length that is not a number',
      'POST /api/auth/signout HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\n',
      400,
      'bad_request',
    ],
    [
      'Content-Length and chunked together',
      'POST /api/auth/signout HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      400,
      'bad_request',
    ],
    [
      'headers over the size limit',
      `GET /api/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20000)}\r\nCookie: authjs.session-token=SECRETVALUE\r\n\r\n`,
      431,
      'headers_too_large',
    ],
  ])(
    "%s is answered in the error catalogue's shape with the security headers, and no raw bytes are logged",
    async (_, bytes, status, code) => {
      const before = server.logs.length;
      const answer = await rawExchange(bytes);
      const [head = '', body = ''] = answer.split('\r\n\r\n');
      expect(head).toMatch(new RegExp(`^HTTP/1.1 ${status} `));
      expect(head.toLowerCase()).toContain('x-content-type-options: nosniff');
      expect(head.toLowerCase()).toContain("content-security-policy: default-src 'none'");
      expect(head.toLowerCase()).toContain('connection: close');
      expect(JSON.parse(body)).toMatchObject({ error: { code } });
      const logged = server.logs.slice(before).join('');
      expect(logged).not.toContain('SECRETVALUE');
      expect(logged).not.toContain('aaaaaaaaaa');
      expect(logged).not.toContain('rawPacket');
    },
  );

  it("a request whose headers never finish gets 408 in the catalogue's shape", async () => {
    const answer = await rawExchange('GET /api/health HTTP/1.1\r\nHost: x\r\nX-Slow: 1\r\n\r\n', 0);
    expect(answer).toMatch(/^HTTP\/1.1 408 /);
    expect(JSON.parse(answer.split('\r\n\r\n')[1] ?? '')).toMatchObject({
      error: { code: 'request_timeout' },
    });
  });

  it('logs at debug level never contain a password, a cookie value or the secret', async () => {
    const client = new Client(server.url);
    await client.signIn('ada@example.com', 'a wrong password for the log');
    await client.signIn('ada@example.com', password);
    const cookie = client.sessionCookie() as string;
    await client.session();
    await client.signOut();
    const logs = server.logs.join('\n');
    expect(logs.length).toBeGreaterThan(0);
    for (const secret of [
      password,
      'a wrong password for the log',
      cookie.slice(0, 40),
      testSecret,
    ]) {
      expect(logs).not.toContain(secret);
    }
    expect(logs).toContain('sign-in refused');
  });
});
