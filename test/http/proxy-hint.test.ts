import { afterEach, describe, expect, it } from 'vitest';
import { forwardedRequestsChecked, looksLikeProxy } from '../../src/http/proxy-hint.js';
import { startServer, type TestServer } from '../helpers/server.js';

/*
 * Behind a proxy without TRUST_PROXY (issue 25 item 2): every client is the proxy's address
 * and shares its per-client budgets. When the first forwarded requests all come from one
 * loopback or private address, one warning names TRUST_PROXY. Over real HTTP on loopback.
 */

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const warnings = (logs: string[]) =>
  logs
    .map((line) => JSON.parse(line) as { level: number; msg: string; setting?: string })
    .filter((line) => line.setting === 'TRUST_PROXY');

async function requests(count: number, headers: Record<string, string>) {
  for (let i = 0; i < count; i += 1) {
    const response = await fetch(`${server?.url}/api/account`, { headers });
    await response.arrayBuffer();
  }
}

const forwardedFor = (i = 0) => ({ 'x-forwarded-for': `203.0.113.${i + 1}` });

describe('a proxy in front that is not trusted', () => {
  it('forwarded requests all from 127.0.0.1: one warning naming TRUST_PROXY, however many follow', async () => {
    server = await startServer();
    await requests(forwardedRequestsChecked - 1, forwardedFor());
    expect(warnings(server.logs)).toEqual([]);
    await requests(forwardedRequestsChecked * 2, forwardedFor(1));
    const said = warnings(server.logs);
    expect(said).toHaveLength(1);
    expect(said[0]?.level).toBe(40);
    expect(said[0]?.msg).toBe(
      'requests come through 127.0.0.1 with X-Forwarded-For, and TRUST_PROXY is not set: every client counts as 127.0.0.1, so all of them share one per-client budget (mail requests, sign-in throttling). If a proxy is in front, set TRUST_PROXY to its address (e.g. TRUST_PROXY=127.0.0.1)',
    );
  });

  it('requests without X-Forwarded-For: no warning', async () => {
    server = await startServer();
    await requests(forwardedRequestsChecked * 2, {});
    expect(warnings(server.logs)).toEqual([]);
  });

  it('with TRUST_PROXY set: no warning', async () => {
    server = await startServer({ config: { trustProxy: ['127.0.0.1'] } });
    await requests(forwardedRequestsChecked * 2, forwardedFor());
    expect(warnings(server.logs)).toEqual([]);
  });
});

describe('what looks like a proxy', () => {
  it.each([
    ['127.0.0.1', true],
    ['::1', true],
    ['::ffff:127.0.0.1', true],
    ['10.1.2.3', true],
    ['172.16.0.9', true],
    ['172.32.0.1', false],
    ['192.168.1.1', true],
    ['100.64.0.1', true],
    ['fd00::1', true],
    ['fe80::1', true],
    ['203.0.113.7', false],
    ['2001:db8::1', false],
    ['::ffff:8.8.8.8', false],
  ])('%s: %s', (address, expected) => {
    expect(looksLikeProxy(address)).toBe(expected);
  });
});
