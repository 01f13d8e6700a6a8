import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';

describe('health routes', () => {
  let server: TestServer;
  let draining = false;
  beforeAll(async () => {
    server = await startServer({ isDraining: () => draining });
  });
  afterAll(() => server.close());

  it('GET /api/health answers exactly status, timestamp and version, uncached', async () => {
    const before = Date.now();
    const response = await fetch(`${server.url}/api/health`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = (await response.json()) as Record<string, string>;
    expect(Object.keys(body).sort()).toEqual(['status', 'timestamp', 'version']);
    expect(body.status).toBe('ok');
    expect(body.version).toBe('9.9.9-test');
    const stamp = Date.parse(body.timestamp as string);
    expect(new Date(stamp).toISOString()).toBe(body.timestamp);
    expect(stamp).toBeGreaterThanOrEqual(before - 1);
    expect(stamp).toBeLessThanOrEqual(Date.now() + 1);
  });

  it('HEAD /api/health answers 200 with headers and no body', async () => {
    const response = await fetch(`${server.url}/api/health`, { method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await response.text()).toBe('');
  });

  it('answers whatever the Host header says', async () => {
    const response = await fetch(`${server.url}/api/health`, {
      headers: { host: 'probe.internal:1234' },
    });
    expect(response.status).toBe(200);
  });

  it('readiness is 200 while the database answers and 503 while draining', async () => {
    const ready = await fetch(`${server.url}/api/health/ready`);
    expect(ready.status).toBe(200);
    draining = true;
    const notReady = await fetch(`${server.url}/api/health/ready`);
    draining = false;
    expect(notReady.status).toBe(503);
    expect(notReady.headers.get('retry-after')).toBe('5');
    const body = (await notReady.json()) as { error: { code: string } };
    expect(body.error.code).toBe('unavailable');
    // Liveness is not readiness: a draining process is still alive.
    expect((await fetch(`${server.url}/api/health`)).status).toBe(200);
  });

  it('carries the security headers and no X-Powered-By', async () => {
    const response = await fetch(`${server.url}/api/health`);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(response.headers.get('x-powered-by')).toBeNull();
    // HSTS only where the client came over https.
    expect(response.headers.get('strict-transport-security')).toBeNull();
  });
});
