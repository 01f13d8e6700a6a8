import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { Client } from '../helpers/client.js';
import { addUser, connects, password, scrape, startGatehouse } from '../helpers/metrics.js';
import type { ServerProcess } from '../helpers/processes.js';

/** A non-loopback IPv4 address of this machine, if it has one. */
function externalAddress(): string | undefined {
  for (const entries of Object.values(os.networkInterfaces())) {
    for (const entry of entries ?? []) {
      if (entry.family === 'IPv4' && !entry.internal) return entry.address;
    }
  }
  return undefined;
}

let dir: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-metrics-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('METRICS_PORT and METRICS_HOST', () => {
  it('are off by default, and a bad value is refused naming the variable', () => {
    const defaults = parseConfig({});
    expect(defaults.ok && defaults.config.metrics).toBe(undefined);
    const empty = parseConfig({ METRICS_PORT: '' });
    expect(empty.ok && empty.config.metrics).toBe(undefined);
    const on = parseConfig({ METRICS_PORT: '9464' });
    expect(on.ok && on.config.metrics).toEqual({
      port: 9464,
      host: '127.0.0.1',
      requestTimeoutMs: 10_000,
    });
    for (const [env, problem] of [
      [{ METRICS_PORT: 'ninety' }, /^METRICS_PORT: /],
      [{ METRICS_PORT: '70000' }, /^METRICS_PORT: /],
      [{ METRICS_PORT: '3000', PORT: '3000' }, /^METRICS_PORT: must differ from PORT/],
      [{ METRICS_PORT: '0x2000' }, /^METRICS_PORT: must be a port number/],
      [{ METRICS_HOST: '0.0.0.0' }, /^METRICS_HOST: is set but METRICS_PORT is not/],
    ] as const) {
      const result = parseConfig(env);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.problems.join('\n')).toMatch(problem);
    }
  });
});

describe('metrics of a running instance', () => {
  let server: ServerProcess;
  let base: string;
  let metricsUrl: string;
  let metricsPort: number;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = path.join(dir, 'single');
    await addUser(dataDir, 'ada@example.com');
    const started = await startGatehouse(dataDir, {
      HOST: '0.0.0.0',
      THROTTLE_EMAIL_MAX_FAILURES: '3',
    });
    ({ server, metricsUrl, metricsPort } = started);
    base = `http://127.0.0.1:${started.port}`;
  }, 30_000);
  afterAll(() => server?.stop());

  it('are served on their own listener, on loopback only, never on the public port', async () => {
    expect((await fetch(`${base}/metrics`)).status).toBe(404);
    expect((await fetch(metricsUrl)).status).toBe(200);
    expect((await fetch(metricsUrl, { method: 'POST' })).status).toBe(405);
    expect((await fetch(`http://127.0.0.1:${metricsPort}/`)).status).toBe(404);
  });

  it.skipIf(externalAddress() === undefined)(
    "are not reachable on the machine's other addresses, while the public port is",
    async () => {
      const external = externalAddress()!;
      // The public port listens on every address here (HOST=0.0.0.0); the metrics do not.
      expect(await connects(external, Number(new URL(base).port))).toBe(true);
      expect(await connects(external, metricsPort)).toBe(false);
    },
  );

  it('count requests by route and status, those answered in front of Fastify too', async () => {
    const before = await scrape(metricsUrl);
    const count = (s: typeof before, route: string, status: string) =>
      s.value('gatehouse_http_request_duration_seconds_count', { route, method: 'GET', status }) ??
      0;
    for (let i = 0; i < 3; i += 1)
      expect((await fetch(`${base}/api/auth/session`)).status).toBe(200);
    for (let i = 0; i < 2; i += 1) expect((await fetch(`${base}/api/health`)).status).toBe(200);
    expect((await fetch(`${base}/nowhere`)).status).toBe(404);
    const after = await scrape(metricsUrl);
    expect(
      count(after, '/api/auth/session', '200') - count(before, '/api/auth/session', '200'),
    ).toBe(3);
    expect(count(after, '/api/health', '200') - count(before, '/api/health', '200')).toBe(2);
    expect(count(after, 'other', '404') - count(before, 'other', '404')).toBe(1);
    // A histogram: the slowest bucket holds every request of the series.
    expect(
      after.value('gatehouse_http_request_duration_seconds_bucket', {
        route: '/api/auth/session',
        method: 'GET',
        status: '200',
        le: '+Inf',
      }),
    ).toBe(count(after, '/api/auth/session', '200'));
  });

  it('count sign-ins by outcome, throttle locks and revocations', async () => {
    const before = await scrape(metricsUrl);
    const outcome = (s: typeof before, name: string) =>
      s.value('gatehouse_signins_total', { outcome: name }) ?? 0;

    const ada = new Client(base);
    expect((await ada.signIn('ada@example.com', 'not the password')).status).toBe(200);
    expect((await ada.signIn('ada@example.com', password)).status).toBe(200);
    expect(((await ada.session()) as { user?: unknown } | null)?.user).toBeDefined();
    expect((await ada.signOut()).status).toBe(200);
    // Three failures lock the email (THROTTLE_EMAIL_MAX_FAILURES=3); the fourth is throttled.
    const guesser = new Client(base);
    for (let i = 0; i < 3; i += 1) await guesser.signIn('nobody@example.com', `guess ${i}`);
    expect((await guesser.signIn('nobody@example.com', 'guess 4')).status).toBe(429);
    // A cross-site post, and a post with a forged CSRF token.
    const crossSite = await new Client(base).postForm(
      '/api/auth/callback/credentials',
      { csrfToken: 'x', email: 'ada@example.com', password },
      { origin: 'https://evil.example' },
    );
    expect(crossSite.status).toBe(403);
    const forged = await new Client(base).postForm('/api/auth/callback/credentials', {
      csrfToken: 'forged',
      email: 'ada@example.com',
      password,
    });
    expect(forged.status).toBe(302);
    // The contract's sign-in path counts as a sign-in too; a body that is no sign-in form is
    // refused before any sign-in starts (415) and is not one.
    expect(
      (await new Client(base).signIn('ada@example.com', password, '/api/auth/signin/credentials'))
        .status,
    ).toBe(200);
    const notAForm = await fetch(`${base}/api/auth/callback/credentials`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'hello',
    });
    expect(notAForm.status).toBe(415);

    const after = await scrape(metricsUrl);
    const delta = (name: string) => outcome(after, name) - outcome(before, name);
    expect({
      success: delta('success'),
      invalid: delta('invalid'),
      throttled: delta('throttled'),
      csrf: delta('csrf'),
      overloaded: delta('overloaded'),
      unavailable: delta('unavailable'),
      error: delta('error'),
    }).toEqual({
      success: 2,
      invalid: 4,
      throttled: 1,
      csrf: 2,
      overloaded: 0,
      unavailable: 0,
      error: 0,
    });
    const locks = (s: typeof before) =>
      s.value('gatehouse_throttle_locks_total', { scope: 'email' });
    expect((locks(after) ?? 0) - (locks(before) ?? 0)).toBe(1);
    const ended = (s: typeof before) =>
      s.value('gatehouse_session_revocations_total', { reason: 'ended' }) ?? 0;
    expect(ended(after) - ended(before)).toBe(1);
    expect(after.value('gatehouse_ready')).toBe(1);
    expect(after.value('gatehouse_hasher_active')).toBe(0);
    expect(after.value('gatehouse_hasher_queue_max')).toBe(64);
    expect(after.value('gatehouse_signin_door_waiting')).toBe(0);
    // The account's record, written after each answer: ada's two sign-ins and one sign-out.
    const events = (s: typeof before, type: string) =>
      s.value('gatehouse_account_events_total', { type }) ?? 0;
    let later = after;
    for (
      const deadline = Date.now() + 20_000;
      events(later, 'signout') - events(before, 'signout') < 1 && Date.now() < deadline;
    ) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      later = await scrape(metricsUrl);
    }
    expect(events(later, 'signin') - events(before, 'signin')).toBe(2);
    expect(events(later, 'signout') - events(before, 'signout')).toBe(1);
  });

  it('carry the process defaults and the event-loop delay', async () => {
    const now = await scrape(metricsUrl);
    expect(now.value('process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(now.value('nodejs_eventloop_lag_p99_seconds')).toBeGreaterThanOrEqual(0);
    expect(now.value('nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
  });

  it('count a database failure, and readiness', async () => {
    expect((await fetch(`${base}/api/health/ready`)).status).toBe(200);
    expect((await scrape(metricsUrl)).value('gatehouse_ready')).toBe(1);
    const ada = new Client(base);
    expect((await ada.signIn('ada@example.com', password)).status).toBe(200);
    const before = (await scrape(metricsUrl)).value('gatehouse_database_errors_total') ?? 0;
    // The table the session check reads disappears under the running service.
    const handle = new DatabaseSync(path.join(dataDir, 'gatehouse.db'));
    handle.exec('drop table sessions');
    handle.close();
    expect((await ada.get('/api/auth/session')).status).toBe(503);
    const after = (await scrape(metricsUrl)).value('gatehouse_database_errors_total') ?? 0;
    expect(after - before).toBeGreaterThanOrEqual(1);
  });
});

describe('metrics of a cluster (WORKERS=2)', () => {
  it('are served by the primary, each series labelled with its worker', async () => {
    const dataDir = path.join(dir, 'cluster');
    const { server, port, metricsUrl } = await startGatehouse(dataDir, {
      WORKERS: '2',
      HASH_CONCURRENCY: '1',
    });
    const health = { route: '/api/health', method: 'GET', status: '200' };
    const requests = 'gatehouse_http_request_duration_seconds_count';
    try {
      // Both workers answer once both listen; until then a scrape leaves the other out.
      let first = await scrape(metricsUrl);
      for (
        const deadline = Date.now() + 30_000;
        first.labelValues('gatehouse_hasher_concurrency', 'worker').length < 2 &&
        Date.now() < deadline;
      ) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        first = await scrape(metricsUrl);
      }
      expect(first.labelValues('gatehouse_hasher_concurrency', 'worker').sort()).toEqual([
        '0',
        '1',
      ]);
      expect(first.sum('gatehouse_hasher_concurrency')).toBe(2);
      // Each on a new connection, so both workers take some.
      for (let i = 0; i < 10; i += 1) {
        const response = await fetch(`http://127.0.0.1:${port}/api/health`, {
          headers: { connection: 'close' },
        });
        expect(response.status).toBe(200);
      }
      const after = await scrape(metricsUrl);
      expect(after.sum(requests, health) - first.sum(requests, health)).toBe(10);
      expect(after.value('gatehouse_ready', { worker: '0' })).toBe(1);
      expect(after.value('gatehouse_ready', { worker: '1' })).toBe(1);
    } finally {
      await server.stop();
    }
  }, 60_000);
});
