import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One GET from `localAddress` (any 127.x.y.z reaches the server on Linux), with `headers`. */
function get(
  server: TestServer,
  path: string,
  localAddress = '127.0.0.1',
  headers: Record<string, string> = {},
): Promise<Answer> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const request = http.get(
      { host: hostname, port, path, localAddress, headers, agent: false },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body }),
        );
      },
    );
    request.on('error', reject);
  });
}

async function statuses(count: number, ask: () => Promise<Answer>): Promise<number[]> {
  const seen: number[] = [];
  for (let i = 0; i < count; i += 1) seen.push((await ask()).status);
  return seen;
}

const fastPaths = process.env.GATEHOUSE_TEST_FAST_PATHS !== 'off';

describe('the request budget, by connection address', () => {
  let server: TestServer;
  // The clock stands still: no token comes back during the test.
  beforeAll(async () => {
    server = await startServer({
      config: { requestBudget: { perSecond: 1, burst: 20 } },
      now: () => 1_800_000_000_000,
    });
  });
  afterAll(() => server.close());

  it('one address flooding a slow path is answered 429 after its burst; others and probes are not', async () => {
    // A request Fastify answers costs 4 of the 20 tokens.
    expect(await statuses(7, () => get(server, '/api/auth/session?x', '127.0.0.1'))).toEqual([
      200, 200, 200, 200, 200, 429, 429,
    ]);
    const refused = await get(server, '/api/auth/session?x', '127.0.0.1');
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body)).toEqual({
      error: {
        code: 'rate_limited',
        message: 'Too many requests from your address; retry after the time given.',
      },
    });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(refused.headers['x-content-type-options']).toBe('nosniff');
    expect(refused.headers['cache-control']).toBe('no-store');
    // Every route is charged, fast answers and unknown routes included.
    expect((await get(server, '/api/auth/session', '127.0.0.1')).status).toBe(429);
    expect((await get(server, '/api/auth/csrf', '127.0.0.1')).status).toBe(429);
    expect((await get(server, '/nothing-here', '127.0.0.1')).status).toBe(429);
    // Probes stay exempt.
    expect((await get(server, '/api/health', '127.0.0.1')).status).toBe(200);
    expect((await get(server, '/api/health/ready', '127.0.0.1')).status).toBe(200);
    // Another address has its own budget.
    expect((await get(server, '/api/auth/session?x', '127.0.0.2')).status).toBe(200);
    expect((await get(server, '/api/auth/session', '127.0.0.2')).status).toBe(200);
  });

  it('a probe with a query string is an ordinary request, and charged', async () => {
    expect(await statuses(6, () => get(server, '/api/health?x', '127.0.0.3'))).toEqual([
      200, 200, 200, 200, 200, 429,
    ]);
    expect((await get(server, '/api/health', '127.0.0.3')).status).toBe(200);
  });

  it.runIf(fastPaths)('a read answered in front costs a quarter of a slow one', async () => {
    const seen = await statuses(21, () => get(server, '/api/auth/session', '127.0.0.4'));
    expect(seen.slice(0, 20).every((status) => status === 200)).toBe(true);
    expect(seen[20]).toBe(429);
  });

  it('the refusals are warned about, not written one line each', () => {
    const warnings = server.logs.filter((line) => line.includes('request budget exceeded'));
    expect(warnings.length).toBeGreaterThanOrEqual(1);
    expect(warnings.length).toBeLessThan(3);
  });
});

describe('the request budget behind a trusted proxy', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({
      config: { trustProxy: ['127.0.0.1'], requestBudget: { perSecond: 1, burst: 8 } },
      now: () => 1_800_000_000_000,
    });
  });
  afterAll(() => server.close());

  it('counts the forwarded client, not the proxy', async () => {
    const from = (address: string) => () =>
      get(server, '/api/auth/session', '127.0.0.1', { 'x-forwarded-for': address });
    expect(await statuses(3, from('203.0.113.9'))).toEqual([200, 200, 429]);
    const refused = await from('203.0.113.9')();
    expect(JSON.parse(refused.body)).toMatchObject({ error: { code: 'rate_limited' } });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await from('203.0.113.10')()).status).toBe(200);
    expect(
      (await get(server, '/api/health', '127.0.0.1', { 'x-forwarded-for': '203.0.113.9' })).status,
    ).toBe(200);
  });
});

describe('the request budget switched off', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({
      config: { requestBudget: { perSecond: 0, burst: 4 } },
      now: () => 1_800_000_000_000,
    });
  });
  afterAll(() => server.close());

  it('refuses nothing', async () => {
    const seen = await statuses(30, () => get(server, '/api/auth/session?x'));
    expect(seen.every((status) => status === 200)).toBe(true);
  });
});
