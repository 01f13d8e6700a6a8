import { afterEach, describe, expect, it, vi } from 'vitest';
import { Client } from '../helpers/client.js';
import {
  addUser,
  countVerifications,
  fakeClock,
  startServer,
  type TestServer,
} from '../helpers/server.js';

const password = 'correct horse battery staple';
const wrong = 'this is not the password';

interface Counted {
  server: TestServer;
  clock: ReturnType<typeof fakeClock>;
  verifications: () => number;
}

async function counted(options: Parameters<typeof startServer>[0] = {}): Promise<Counted> {
  const clock = fakeClock();
  const counter = countVerifications();
  const server = await startServer({ now: clock.now, ...options, wrap: counter.wrap });
  await addUser(server, 'ada@example.com', password);
  return { server, clock, verifications: counter.count };
}

async function body(response: Response): Promise<{ url: string }> {
  return (await response.json()) as { url: string };
}

describe('brute-force throttling', () => {
  let current: TestServer | undefined;
  afterEach(async () => {
    vi.useRealTimers();
    await current?.close();
    current = undefined;
  });

  it('locks an account after 10 failures; the right password then gets 429 and Retry-After, with no hashing', async () => {
    const { server, clock, verifications } = await counted();
    current = server;
    const client = new Client(server.url);
    for (let i = 0; i < 10; i += 1) {
      const response = await client.signIn('ada@example.com', wrong);
      expect(response.status).toBe(200);
      expect((await body(response)).url).toContain('code=credentials');
    }
    expect(verifications()).toBe(10);
    const locked = await client.signIn('ada@example.com', password);
    expect(locked.status).toBe(429);
    expect(locked.headers.get('retry-after')).toBe('900');
    expect((await body(locked)).url).toBe(
      `${server.url}/api/auth/signin?error=CredentialsSignin&code=rate_limited`,
    );
    expect(client.sessionCookie()).toBeUndefined();
    expect(verifications()).toBe(10);

    // The lock ends by itself; a success then starts the count over.
    clock.advance(900_000 + 1000);
    const after = await client.signIn('ada@example.com', password);
    expect(after.status).toBe(200);
    expect(await client.session()).toMatchObject({ user: { email: 'ada@example.com' } });
    for (let i = 0; i < 9; i += 1) await client.signIn('ada@example.com', wrong);
    const stillOpen = await client.signIn('ada@example.com', password);
    expect((await body(stillOpen)).url).not.toContain('rate_limited');
  });

  it('a plain form post that is throttled keeps the 302 shape with Retry-After', async () => {
    const { server } = await counted({ throttle: { emailMaxFailures: 2 } });
    current = server;
    const client = new Client(server.url);
    await client.signIn('ada@example.com', wrong);
    await client.signIn('ada@example.com', wrong);
    const csrfToken = await client.csrfToken();
    const response = await client.postForm('/api/auth/callback/credentials', {
      csrfToken,
      email: 'ada@example.com',
      password,
    });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toContain('error=CredentialsSignin&code=rate_limited');
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('100 concurrent wrong passwords reach the hasher no more than the limit allows', async () => {
    const { server, verifications } = await counted();
    current = server;
    const clients = Array.from({ length: 100 }, () => new Client(server.url));
    const tokens = await Promise.all(clients.map((c) => c.csrfToken()));
    const responses = await Promise.all(
      clients.map((c, i) =>
        c.postForm(
          '/api/auth/callback/credentials',
          { csrfToken: tokens[i] as string, email: 'ada@example.com', password: wrong },
          { 'x-auth-return-redirect': '1' },
        ),
      ),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);
    expect(statuses.filter((s) => s === 429)).toHaveLength(90);
    expect(verifications()).toBe(10);
  });

  it('unknown emails are counted like known ones, and a phantom lock ends by itself', async () => {
    const { server, clock } = await counted({ throttle: { emailMaxFailures: 3 } });
    current = server;
    const client = new Client(server.url);
    for (let i = 0; i < 3; i += 1) await client.signIn('ghost@example.com', wrong);
    const locked = await client.signIn('ghost@example.com', wrong);
    expect(locked.status).toBe(429);
    clock.advance(901_000);
    await addUser(server, 'ghost@example.com', password);
    await client.signIn('ghost@example.com', password);
    expect(await client.session()).toMatchObject({ user: { email: 'ghost@example.com' } });
  });

  it('case and whitespace variants of an email share one counter', async () => {
    const { server } = await counted({ throttle: { emailMaxFailures: 3 } });
    current = server;
    const client = new Client(server.url);
    for (const email of ['ADA@example.com', ' ada@EXAMPLE.com', 'ａｄａ@example.com']) {
      await client.signIn(email, wrong);
    }
    expect((await client.signIn('ada@example.com', password)).status).toBe(429);
  });

  it('one address spraying many emails is throttled per address', async () => {
    const { server } = await counted({ throttle: { ipMaxFailures: 15 } });
    current = server;
    const client = new Client(server.url);
    for (let i = 0; i < 15; i += 1) {
      expect((await client.signIn(`user${i}@example.com`, 'Spring2024!!x')).status).toBe(200);
    }
    const sprayed = await client.signIn('user99@example.com', 'Spring2024!!x');
    expect(sprayed.status).toBe(429);
    expect(sprayed.headers.get('retry-after')).toBeTruthy();
  });

  it('X-Forwarded-For is ignored without a trusted proxy', async () => {
    const { server } = await counted({ throttle: { ipMaxFailures: 5 } });
    current = server;
    const client = new Client(server.url);
    for (let i = 0; i < 5; i += 1) {
      await client.signIn(`u${i}@example.com`, wrong, undefined, {});
      client.defaultHeaders['x-forwarded-for'] = `203.0.113.${i + 1}`;
    }
    expect((await client.signIn('other@example.com', wrong)).status).toBe(429);
  });

  it('behind a trusted proxy, rotating addresses still trips the per-account limit', async () => {
    const { server } = await counted({ config: { trustProxy: ['127.0.0.1'] } });
    current = server;
    for (let i = 0; i < 10; i += 1) {
      const client = new Client(server.url, { 'x-forwarded-for': `198.51.100.${i + 1}` });
      expect((await client.signIn('ada@example.com', wrong)).status).toBe(200);
    }
    const client = new Client(server.url, { 'x-forwarded-for': '198.51.100.200' });
    expect((await client.signIn('ada@example.com', password)).status).toBe(429);
  });

  it('unknown email and wrong password each cost exactly one verification', async () => {
    const { server, verifications } = await counted();
    current = server;
    const client = new Client(server.url);
    const start = verifications();
    await client.signIn('nobody@example.com', wrong);
    expect(verifications()).toBe(start + 1);
    await client.signIn('ada@example.com', wrong);
    expect(verifications()).toBe(start + 2);
  });
});
