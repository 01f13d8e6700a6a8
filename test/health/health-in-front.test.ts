import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';

async function observe(url: string) {
  const response = await fetch(`${url}/api/health`);
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    if (name !== 'date' && name !== 'keep-alive') headers[name] = value;
  });
  const body = (await response.json()) as Record<string, string>;
  return {
    status: response.status,
    headers,
    keys: Object.keys(body),
    status_: body.status,
    version: body.version,
  };
}

describe.each([
  ['http', undefined],
  ['https behind AUTH_URL', 'https://auth.example.com'],
])('the health fast path answers as the Fastify route does (%s)', (_name, authUrl) => {
  let fast: TestServer;
  let plain: TestServer;
  let draining = false;
  beforeAll(async () => {
    fast = await startServer({ config: { fastPaths: true, authUrl }, isDraining: () => draining });
    plain = await startServer({
      config: { fastPaths: false, authUrl },
      isDraining: () => draining,
    });
  });
  afterAll(async () => {
    await fast.close();
    await plain.close();
  });

  it('with the same status, headers and body fields', async () => {
    const [a, b] = [await observe(fast.url), await observe(plain.url)];
    expect(a).toEqual(b);
    expect(a.keys).toEqual(['status', 'timestamp', 'version']);
    expect(a.headers['strict-transport-security'] !== undefined).toBe(authUrl !== undefined);
  });

  it('and while draining, both close the connection and stay 200', async () => {
    draining = true;
    const [a, b] = [await observe(fast.url), await observe(plain.url)];
    draining = false;
    expect(a).toEqual(b);
    expect(a.status).toBe(200);
    expect(a.headers.connection).toBe('close');
  });
});

describe('health requests the fast path leaves to the route', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ config: { fastPaths: true } });
  });
  afterAll(() => server.close());

  it.each([
    ['HEAD', '/api/health'],
    ['GET', '/api/health?probe=1'],
  ])('%s %s is still answered 200 by the route', async (method, path) => {
    const response = await fetch(`${server.url}${path}`, { method });
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  it('a fresh timestamp on every call', async () => {
    const first = (
      (await (await fetch(`${server.url}/api/health`)).json()) as { timestamp: string }
    ).timestamp;
    await new Promise((r) => setTimeout(r, 5));
    const second = (
      (await (await fetch(`${server.url}/api/health`)).json()) as { timestamp: string }
    ).timestamp;
    expect(Date.parse(second)).toBeGreaterThan(Date.parse(first));
  });
});

describe('the health fast path under a clock it does not usually see', () => {
  it('a timestamp wider than 24 characters (year 10000) still gets an exact Content-Length', async () => {
    const at = Date.UTC(10000, 0, 1);
    const fast = await startServer({ config: { fastPaths: true }, now: () => at });
    try {
      const response = await fetch(`${fast.url}/api/health`);
      const text = await response.text();
      expect(response.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
      expect((JSON.parse(text) as { timestamp: string }).timestamp).toBe(
        new Date(at).toISOString(),
      );
    } finally {
      await fast.close();
    }
  });
});
