import { afterEach, describe, expect, it } from 'vitest';
import { WorkGate } from '../../src/traffic/work-gate.js';
import { Client } from '../helpers/client.js';
import { addUser, startServer, type TestServer } from '../helpers/server.js';

const password = 'correct horse battery staple';

/** One sign-in from `address` (through the trusted proxy): 'ok', an Auth.js code, or a status. */
async function signIn(server: TestServer, address: string, email: string): Promise<string> {
  const client = new Client(server.url, { 'x-forwarded-for': address });
  const response = await client.signIn(email, password);
  if (response.status >= 500) return String(response.status);
  const { url } = (await response.json()) as { url: string };
  return new URL(url).searchParams.get('code') ?? 'ok';
}

describe('fair sign-in under load', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('every attempt counts per client address, successes too', async () => {
    server = await startServer({
      config: { trustProxy: ['127.0.0.1'] },
      throttle: { ipMaxAttempts: 4, emailMaxAttempts: 1000 },
    });
    await addUser(server, 'ada@example.com', password);
    const codes = [];
    for (let i = 0; i < 5; i += 1)
      codes.push(await signIn(server, '198.51.100.7', 'ada@example.com'));
    expect(codes).toEqual(['ok', 'ok', 'ok', 'ok', 'rate_limited']);
    expect(await signIn(server, '198.51.100.8', 'ada@example.com')).toBe('ok');
  });

  it('every attempt counts per account, successes too, whatever the address', async () => {
    server = await startServer({
      config: { trustProxy: ['127.0.0.1'] },
      throttle: { ipMaxAttempts: 1000, emailMaxAttempts: 3 },
    });
    await addUser(server, 'ada@example.com', password);
    await addUser(server, 'bob@example.com', password);
    const codes = [];
    for (let i = 0; i < 4; i += 1)
      codes.push(await signIn(server, `203.0.113.${i + 1}`, 'ada@example.com'));
    expect(codes).toEqual(['ok', 'ok', 'ok', 'rate_limited']);
    expect(await signIn(server, '203.0.113.9', 'bob@example.com')).toBe('ok');
  });

  it('while one address floods with valid sign-ins, another address still gets through', async () => {
    server = await startServer({
      config: { trustProxy: ['127.0.0.1'] },
      hashConcurrency: 1,
      hashQueueMax: 8,
    });
    await addUser(server, 'flood@example.com', password);
    await addUser(server, 'ada@example.com', password);
    const target = server;
    let flooding = true;
    const flooder = async () => {
      const outcomes: string[] = [];
      while (flooding) outcomes.push(await signIn(target, '198.51.100.66', 'flood@example.com'));
      return outcomes;
    };
    const floods = Array.from({ length: 30 }, flooder);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const person: string[] = [];
    for (let i = 0; i < 6; i += 1) {
      person.push(await signIn(target, '192.0.2.10', 'ada@example.com'));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    flooding = false;
    const flooded = (await Promise.all(floods)).flat();
    // The flood was real: the door turned most of it away...
    expect(flooded.filter((code) => code === '503').length).toBeGreaterThan(10);
    // ...and the person signed in every time.
    expect(person).toEqual(Array(6).fill('ok'));
  }, 60_000);
});

describe('the door (WorkGate)', () => {
  it('lets waiters in round-robin by party, and caps each party at its share', async () => {
    const gate = new WorkGate(1, 6, 2);
    const order: string[] = [];
    let release!: () => void;
    const first = gate.run(() => new Promise<void>((resolve) => (release = resolve)), 'a');
    const started = ['a', 'a', 'a', 'b', 'b', 'c'].map((party) =>
      gate.tryRun(async () => {
        order.push(party);
      }, party),
    );
    // The third 'a' waiter is over a's share: refused at once.
    expect(started.map((promise) => promise === undefined)).toEqual([
      false,
      false,
      true,
      false,
      false,
      false,
    ]);
    release();
    await first;
    await Promise.all(started);
    expect(order).toEqual(['a', 'b', 'c', 'a', 'b']);
  });
});
