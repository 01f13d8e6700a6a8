import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '../helpers/client.js';
import { addUser, startServer, type TestServer } from '../helpers/server.js';
import { WorkGate } from '../../src/traffic/work-gate.js';

const password = 'correct horse battery staple';

interface ErrorBody {
  error: { code: string; message: string; requestId?: string };
}

describe('faults during sign-in', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('a database locked by another process: no session, a generic 503, readiness 503, liveness 200, then recovery', async () => {
    server = await startServer();
    await addUser(server, 'ada@example.com', password);
    const client = new Client(server.url);
    const csrfToken = await client.csrfToken();

    const other = new DatabaseSync(path.join(server.dir, 'test.db'));
    other.exec('begin exclusive');
    try {
      const response = await client.postForm(
        '/api/auth/callback/credentials',
        { csrfToken, email: 'ada@example.com', password },
        { 'x-auth-return-redirect': '1' },
      );
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('5');
      const text = await response.text();
      expect((JSON.parse(text) as ErrorBody).error.code).toBe('unavailable');
      expect(text).not.toMatch(/locked|SQLITE|sqlite|\.db|at /);
      expect(client.sessionCookie()).toBeUndefined();
      expect((await fetch(`${server.url}/api/health/ready`)).status).toBe(503);
      expect((await fetch(`${server.url}/api/health`)).status).toBe(200);
    } finally {
      other.exec('rollback');
      other.close();
    }

    expect((await fetch(`${server.url}/api/health/ready`)).status).toBe(200);
    const recovered = await client.signIn('ada@example.com', password);
    expect(recovered.status).toBe(200);
    expect(await client.session()).toMatchObject({ user: { email: 'ada@example.com' } });
    expect(server.logs.join('')).toContain('database unavailable during auth');
  });

  it('an unexpected error inside authorize is a 500 with a request id that the log also has', async () => {
    server = await startServer({
      wrap: (deps) => ({
        ...deps,
        hasher: {
          ...deps.hasher,
          verify: () => Promise.reject(new TypeError('injected failure')),
        },
      }),
    });
    await addUser(server, 'ada@example.com', password);
    const client = new Client(server.url);
    const response = await client.signIn('ada@example.com', password);
    expect(response.status).toBe(500);
    const text = await response.text();
    const body = JSON.parse(text) as ErrorBody;
    expect(body.error.code).toBe('internal_error');
    expect(body.error.requestId).toMatch(/\S+/);
    expect(text).not.toContain('injected failure');
    expect(client.sessionCookie()).toBeUndefined();
    const line = server.logs.find((l) => l.includes('unexpected error during auth'));
    expect(line).toContain(`"reqId":"${body.error.requestId}"`);
    expect(line).toContain('injected failure');
    // The process is still serving.
    expect((await fetch(`${server.url}/api/health`)).status).toBe(200);
  });

  it('when the hasher queue is full, sign-ins are shed with 503 + Retry-After and none is lost', async () => {
    server = await startServer({
      hashConcurrency: 1,
      hashQueueMax: 2,
      throttle: { emailMaxFailures: 1000 },
    });
    await addUser(server, 'ada@example.com', password);
    const clients = Array.from({ length: 20 }, () => new Client(server!.url));
    const tokens = await Promise.all(clients.map((c) => c.csrfToken()));
    const responses = await Promise.all(
      clients.map((c, i) =>
        c.postForm(
          '/api/auth/callback/credentials',
          { csrfToken: tokens[i] as string, email: 'ada@example.com', password },
          { 'x-auth-return-redirect': '1' },
        ),
      ),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.every((s) => s === 200 || s === 503)).toBe(true);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(3);
    const shed = responses.filter((r) => r.status === 503);
    expect(shed.length).toBeGreaterThan(0);
    for (const r of shed) {
      expect(r.headers.get('retry-after')).toBe('1');
      expect(((await r.json()) as ErrorBody).error.code).toBe('overloaded');
    }
    // Shedding is the plan under a flood, not a failure: nothing is logged as an error.
    const levels = server.logs.map((line) => (JSON.parse(line) as { level: number }).level);
    expect(levels.filter((level) => level >= 50)).toEqual([]);
  });

  it('while sign-ins fill the door, another is shed before any of its work, and counts nothing', async () => {
    // A hasher of one slot and no queue lets one sign-in into Auth.js at a time, with no one
    // waiting at the door; the test holds that sign-in's hash.
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const gate = new WorkGate(1, 0);
    server = await startServer({
      throttle: { emailMaxFailures: 1 },
      wrap: (deps) => ({
        ...deps,
        hasher: {
          ...deps.hasher,
          limits: { concurrency: 1, queueMax: 0 },
          verify: (hash, pw) =>
            gate.run(async () => {
              await held;
              return deps.hasher.verify(hash, pw);
            }),
        },
      }),
    });
    await addUser(server, 'ada@example.com', password);
    const inFlight = new Client(server.url).signIn('ada@example.com', password);
    await expect.poll(() => gate.active, { timeout: 20_000, interval: 5 }).toBe(1);

    // Not even its CSRF token is looked at: with the door full, Auth.js never sees it.
    const shed = await new Client(server.url).postForm(
      '/api/auth/callback/credentials',
      { csrfToken: 'not-a-token', email: 'bob@example.com', password: 'wrong password here' },
      { 'x-auth-return-redirect': '1' },
    );
    expect(shed.status).toBe(503);
    expect(shed.headers.get('retry-after')).toBe('1');
    expect(((await shed.json()) as ErrorBody).error.code).toBe('overloaded');

    release();
    expect((await inFlight).status).toBe(200);
    // The shed attempt was never charged: with a limit of one failure per email, Bob's next
    // wrong password is refused as wrong, not as rate-limited.
    await addUser(server, 'bob@example.com', password);
    const late = await new Client(server.url).signIn('bob@example.com', 'another wrong password');
    expect(late.status).toBe(200);
    expect(((await late.json()) as { url: string }).url).toContain('code=credentials');
    const again = new Client(server.url);
    expect((await again.signIn('bob@example.com', password)).status).toBe(429);
  });
  it('a sign-in whose client gave up while waiting at the door is never checked', async () => {
    // One hash slot and a queue of one: two sign-ins inside Auth.js, one more at the door.
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const gate = new WorkGate(1, 1);
    const verified: string[] = [];
    server = await startServer({
      wrap: (deps) => ({
        ...deps,
        hasher: {
          ...deps.hasher,
          limits: { concurrency: 1, queueMax: 1 },
          verify: (hash, pw) => {
            verified.push(pw);
            return gate.run(async () => {
              await held;
              return deps.hasher.verify(hash, pw);
            });
          },
        },
      }),
    });
    for (const name of ['ada', 'cy', 'dan']) await addUser(server, `${name}@example.com`, password);
    const inside = ['ada', 'cy'].map((name) =>
      new Client(server!.url).signIn(`${name}@example.com`, password),
    );
    await expect.poll(() => gate.queued, { timeout: 20_000, interval: 5 }).toBe(1);
    expect([gate.active, gate.queued]).toEqual([1, 1]);

    // Dan's sign-in waits at the door; then Dan closes the tab.
    const dan = new Client(server.url);
    const csrfToken = await dan.csrfToken();
    const giveUp = new AbortController();
    const waiting = dan
      .request('/api/auth/callback/credentials', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrfToken, email: 'dan@example.com', password }).toString(),
        signal: giveUp.signal,
      })
      .catch((error: unknown) => error);
    await new Promise((r) => setTimeout(r, 300));
    giveUp.abort();
    expect(await waiting).toBeInstanceOf(Error);
    await new Promise((r) => setTimeout(r, 100));

    release();
    expect((await Promise.all(inside)).map((r) => r.status)).toEqual([200, 200]);
    await new Promise((r) => setTimeout(r, 300));
    // Two hashes, for the two sign-ins whose clients waited; none for the one that left.
    expect(verified).toHaveLength(2);
  });
});
