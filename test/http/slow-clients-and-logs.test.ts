import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../helpers/client.js';
import { addUser, startServer, testSecret, type TestServer } from '../helpers/server.js';

const password = 'correct horse battery staple';

describe('slow clients are dropped, and logs never leak secrets', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ config: { requestTimeoutMs: 1000 } });
    await addUser(server, 'ada@example.com', password, 'Ada');
  });
  afterAll(() => server.close());

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
