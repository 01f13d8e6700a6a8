import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../helpers/client.js';
import { addUser, fakeClock, startServer, type TestServer } from '../helpers/server.js';
import { aroundSessionChecks } from '../helpers/sessions.js';

// What the session and CSRF reads answered in front of Fastify (src/auth/session/front-read.ts) owe a
// user beyond the answer itself, which test/auth/session-read-matches-auth-js.test.ts compares with plain Auth.js.
// With fast paths off everything goes through Fastify, and the same expectations hold.

interface LogLine {
  msg: string;
  reqId?: string;
  method?: string;
  path?: string;
  status?: number;
  ms?: number;
}

function rawGet(
  url: string,
  path: string,
  headers: Record<string, string>,
  agent: http.Agent | false = false,
) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>(
    (resolve, reject) => {
      http
        .get(`${url}${path}`, { headers, agent }, (response) => {
          let body = '';
          response.on('data', (chunk: Buffer) => (body += chunk.toString()));
          response.on('end', () =>
            resolve({ status: response.statusCode ?? 0, headers: response.headers, body }),
          );
        })
        .on('error', reject);
    },
  );
}

describe('session and CSRF reads', () => {
  let server: TestServer;
  let draining = false;
  beforeAll(async () => {
    server = await startServer({ isDraining: () => draining });
    await addUser(server, 'ada@example.com', 'correct horse battery staple', 'Ada');
  });
  afterAll(() => server.close());

  const lines = (): LogLine[] =>
    server.logs
      .join('')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as LogLine);

  it('each get one access line, with a request id from the same series as every other route', async () => {
    const before = lines().length;
    const client = new Client(server.url);
    await client.signIn('ada@example.com', 'correct horse battery staple');
    expect(await client.session()).toMatchObject({ user: { email: 'ada@example.com' } });
    expect((await fetch(`${server.url}/api/auth/providers`)).status).toBe(200);
    expect((await fetch(`${server.url}/api/auth/csrf`)).status).toBe(200);

    const access = lines()
      .slice(before)
      .filter((line) => line.msg === 'request');
    const read = access.filter((line) => line.path === '/api/auth/session');
    expect(read).toHaveLength(1);
    expect(read[0]).toMatchObject({ method: 'GET', status: 200 });
    expect(typeof read[0]?.ms).toBe('number');
    expect(access.filter((line) => line.path === '/api/auth/csrf').length).toBeGreaterThan(0);
    const ids = access.map((line) => line.reqId);
    expect(ids.every((id) => typeof id === 'string' && /^req-[0-9a-z]+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('while draining close their connection, as every other answer does', async () => {
    // A kept-alive client: without one Node's client asks for Connection: close itself.
    const agent = new http.Agent({ keepAlive: true });
    draining = true;
    try {
      const session = await rawGet(server.url, '/api/auth/session', {}, agent);
      const csrf = await rawGet(server.url, '/api/auth/csrf', {}, agent);
      expect([session.status, csrf.status]).toEqual([200, 200]);
      expect(session.headers.connection).toBe('close');
      expect(csrf.headers.connection).toBe('close');
    } finally {
      draining = false;
      agent.destroy();
    }
  });

  it('with a Host header that names no host get the route’s 400, not an answer for it', async () => {
    const response = await rawGet(server.url, '/api/auth/csrf', { host: 'exa mple.com' });
    expect(response.status).toBe(400);
    expect(response.headers['set-cookie']).toBeUndefined();
    expect(JSON.parse(response.body)).toMatchObject({ error: { code: 'bad_request' } });
  });

  it('the origin comes from the Host header when AUTH_URL is not set', async () => {
    const response = await rawGet(server.url, '/api/auth/csrf', { host: 'app.example:8080' });
    expect(response.status).toBe(200);
    const callback = (response.headers['set-cookie'] ?? []).find((c) =>
      c.startsWith('authjs.callback-url='),
    );
    expect(callback).toContain('authjs.callback-url=http%3A%2F%2Fapp.example%3A8080;');
  });
});

describe('a session read asks the store once', () => {
  let server: TestServer;
  let reads = 0;
  beforeAll(async () => {
    server = await startServer({
      wrap: (deps) => ({
        ...deps,
        sessions: aroundSessionChecks(deps.sessions, () => {
          reads += 1;
        }),
      }),
    });
    await addUser(server, 'ada@example.com', 'correct horse battery staple', 'Ada');
  });
  afterAll(() => server.close());

  async function signedIn(): Promise<Client> {
    const client = new Client(server.url);
    await client.signIn('ada@example.com', 'correct horse battery staple');
    return client;
  }

  it('for a session revoked elsewhere, which reads as no session and is cleared', async () => {
    const client = await signedIn();
    const copy = new Client(server.url);
    copy.cookies.set('authjs.session-token', client.sessionCookie()!);
    await copy.signOut();
    reads = 0;
    const response = await rawGet(server.url, '/api/auth/session', {
      cookie: client.cookieHeader(),
    });
    expect(response.body).toBe('null');
    expect(response.headers['set-cookie']).toContain(
      'authjs.session-token=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax',
    );
    expect(reads).toBe(1);
  });

  it('for a live session held in chunks, which Auth.js reads', async () => {
    const token = (await signedIn()).sessionCookie()!;
    reads = 0;
    const response = await rawGet(server.url, '/api/auth/session', {
      cookie: `authjs.session-token.0=${token.slice(0, 300)}; authjs.session-token.1=${token.slice(300)}`,
    });
    expect(JSON.parse(response.body)).toMatchObject({ user: { email: 'ada@example.com' } });
    expect(reads).toBe(1);
  });
});

// A browser repeats one Cookie header on every read of a kept-alive connection; the front keeps
// what the last read of it settled (session-read.ts, ReadMemo). Each read must still ask the
// store, see a rename, end with a revocation, and let an expired token go as it did.
describe('reads that repeat a Cookie header on one kept-alive connection', () => {
  let server: TestServer;
  let reads = 0;
  let clock: ReturnType<typeof fakeClock>;
  let userId = '';
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  beforeAll(async () => {
    clock = fakeClock();
    server = await startServer({
      now: clock.now,
      wrap: (deps) => ({
        ...deps,
        sessions: aroundSessionChecks(deps.sessions, () => {
          reads += 1;
        }),
      }),
    });
    userId = await addUser(server, 'ada@example.com', 'correct horse battery staple', 'Ada');
  });
  afterAll(async () => {
    agent.destroy();
    clock.restore();
    await server.close();
  });

  const read = (cookie: string) => rawGet(server.url, '/api/auth/session', { cookie }, agent);

  it('are each checked with the store, and follow a rename and then a revocation', async () => {
    const client = new Client(server.url);
    await client.signIn('ada@example.com', 'correct horse battery staple');
    const cookie = client.cookieHeader();
    reads = 0;
    const sockets = new Set<unknown>();
    agent.on('free', (socket) => sockets.add(socket));
    expect(JSON.parse((await read(cookie)).body)).toMatchObject({ user: { name: 'Ada' } });
    expect(JSON.parse((await read(cookie)).body)).toMatchObject({ user: { name: 'Ada' } });
    expect(reads).toBe(2);
    await server.services.users.rename(userId, 'Ada Lovelace');
    expect(JSON.parse((await read(cookie)).body)).toMatchObject({ user: { name: 'Ada Lovelace' } });
    const copy = new Client(server.url);
    copy.cookies.set('authjs.session-token', client.sessionCookie()!);
    await copy.signOut();
    const ended = await read(cookie);
    expect(ended.body).toBe('null');
    expect(ended.headers['set-cookie']).toContain(
      'authjs.session-token=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax',
    );
    expect(reads).toBe(4);
    // All on one connection: the repeats are what the test is about.
    expect(sockets.size).toBe(1);
  });

  it('end when the token expires, as on a new connection', async () => {
    const client = new Client(server.url);
    await client.signIn('ada@example.com', 'correct horse battery staple');
    const cookie = client.cookieHeader();
    expect(JSON.parse((await read(cookie)).body)).toMatchObject({ user: { name: 'Ada Lovelace' } });
    // Past the token's expiry (30 days by default) and the clock tolerance.
    clock.advance(31 * 24 * 60 * 60 * 1000);
    const again = await read(cookie);
    const fresh = await rawGet(server.url, '/api/auth/session', { cookie });
    expect(again.body).toBe(fresh.body);
    expect(again.body).toBe('null');
    expect(again.headers['set-cookie']).toEqual(fresh.headers['set-cookie']);
  });
});
