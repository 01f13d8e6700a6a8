import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../helpers/client.js';
import { startServer, type TestServer } from '../helpers/server.js';

/** One wrong sign-in from `address` (through the trusted proxy); the answer's code. */
async function attempt(server: TestServer, address: string, email: string): Promise<string> {
  const client = new Client(server.url, { 'x-forwarded-for': address });
  const response = await client.signIn(email, 'not the password at all');
  const { url } = (await response.json()) as { url: string };
  return new URL(url).searchParams.get('code') ?? 'ok';
}

describe('IPv6 clients are counted per /64', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({
      config: { trustProxy: ['127.0.0.1'] },
      throttle: { emailMaxFailures: 1000, ipMaxFailures: 3, windowSeconds: 900, lockSeconds: 900 },
    });
  });
  afterAll(() => server.close());

  it('addresses that differ only in their last 64 bits share one budget', async () => {
    const codes = [];
    for (const address of [
      '2001:db8:aa:1::1',
      '2001:db8:aa:1::2',
      '2001:db8:aa:1:ffff:1:2:3',
      '2001:db8:aa:1:abcd::9',
    ]) {
      codes.push(await attempt(server, address, `v6-${codes.length}@example.com`));
    }
    expect(codes).toEqual(['credentials', 'credentials', 'credentials', 'rate_limited']);
    // The neighbouring /64 is someone else.
    expect(await attempt(server, '2001:db8:aa:2::1', 'other@example.com')).toBe('credentials');
  });

  it('an IPv4-mapped IPv6 address counts as its IPv4 address', async () => {
    const codes = [];
    for (const address of ['192.0.2.7', '::ffff:192.0.2.7', '192.0.2.7', '::ffff:c000:207']) {
      codes.push(await attempt(server, address, `mapped-${codes.length}@example.com`));
    }
    expect(codes).toEqual(['credentials', 'credentials', 'credentials', 'rate_limited']);
  });
});
