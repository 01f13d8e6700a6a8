import { describe, expect, it } from 'vitest';
import { ipPrefix, loopbackShown, shownNetwork } from '../../src/util/ip-prefix.js';

describe('the network an address is shown as', () => {
  it.each([
    ['203.0.113.77', '203.0.113.0/24'],
    ['::ffff:203.0.113.77', '203.0.113.0/24'],
    ['2001:db8:abcd:12:1:2:3:4', '2001:db8:abcd::/48'],
    ['127.0.0.1', loopbackShown],
    ['127.10.20.30', loopbackShown],
    ['::ffff:127.0.0.1', loopbackShown],
    ['::1', loopbackShown],
    ['::2', '::/48'],
    ['gatehouse CLI', 'gatehouse CLI'],
    ['', ''],
  ])('%j reads as %j', (address, shown) => {
    expect(shownNetwork(address)).toBe(shown);
  });

  it('a loopback address keeps its network key: sign_in_places rows stay comparable', () => {
    expect(['127.0.0.1', '::ffff:127.0.0.1', '::1'].map(ipPrefix)).toEqual([
      '127.0.0.0/24',
      '127.0.0.0/24',
      '::/48',
    ]);
  });
});
