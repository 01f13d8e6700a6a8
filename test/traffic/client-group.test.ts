import { describe, expect, it } from 'vitest';
import { clientGroup } from '../../src/traffic/client-group.js';

describe('clientGroup', () => {
  it.each<[string, string, string]>([
    ['an IPv4 address counts as itself', '192.0.2.1', '192.0.2.1'],
    ['the lowest IPv4 address counts as itself', '0.0.0.0', '0.0.0.0'],
    ['the highest IPv4 address counts as itself', '255.255.255.255', '255.255.255.255'],
    ['an IPv6 address counts as its /64', '2001:db8::1', '2001:db8::/64'],
    [
      'any address in the same /64 counts as the same group',
      '2001:db8:0:0:1:2:3:4',
      '2001:db8::/64',
    ],
    ['the next /64 is another group', '2001:db8:0:1::1', '2001:db8:0:1::/64'],
    [
      'a fully written IPv6 address groups like its short form',
      '2001:0db8:0000:0000:0000:0000:0000:0001',
      '2001:db8::/64',
    ],
    ['hex digits in capitals group like lower case', '2001:DB8:0:0:ffff::', '2001:db8::/64'],
    ['an address with no zero groups keeps its first four', '1:2:3:4:5:6:7:8', '1:2:3:4::/64'],
    [
      'the highest IPv6 address counts as its /64',
      'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
      'ffff:ffff:ffff:ffff::/64',
    ],
    ['IPv6 loopback counts as the zero /64', '::1', '::/64'],
    ['the unspecified IPv6 address counts as the zero /64', '::', '::/64'],
    ['a zone index is dropped with the interface part', 'fe80::1%eth0', 'fe80::/64'],
    ['an IPv4-mapped address counts as its IPv4 address', '::ffff:192.0.2.1', '192.0.2.1'],
    ['an IPv4-mapped address in hex counts as its IPv4 address', '::ffff:c000:201', '192.0.2.1'],
    [
      'an IPv4-mapped address in capitals counts as its IPv4 address',
      '::FFFF:192.0.2.1',
      '192.0.2.1',
    ],
    [
      // ipaddr.js reads the deprecated IPv4-compatible form as mapped (its `::a.b.c.d` rule), so
      // it shares the IPv4 address's budget; its hex spelling below does not. Neither is routable.
      'an IPv4-compatible `::a.b.c.d` counts as its IPv4 address',
      '::192.0.2.1',
      '192.0.2.1',
    ],
    ['the same IPv4-compatible address in hex counts as the zero /64', '::c000:201', '::/64'],
    [
      'an IPv4-translated address (::ffff:0:0/96) is IPv6: the zero /64',
      '::ffff:0:192.0.2.1',
      '::/64',
    ],
    ['NAT64 (64:ff9b::/96) is IPv6: its /64', '64:ff9b::192.0.2.1', '64:ff9b::/64'],
    ['6to4 is IPv6: its /64', '2002:c000:0201::1', '2002:c000:201::/64'],
    ['a short IPv4 spelling counts as its dotted quad', '127.1', '127.0.0.1'],
    ['a three-part IPv4 spelling counts as its dotted quad', '192.0.2', '192.0.0.2'],
    ['a leading zero reads as octal', '010.0.0.1', '8.0.0.1'],
    ['a hex part counts as its dotted quad', '0x7f.0.0.1', '127.0.0.1'],
    ['a 32-bit number counts as its dotted quad', '3232235777', '192.168.1.1'],
    ['what is not an address counts as itself', 'not-an-ip', 'not-an-ip'],
    ['an empty address counts as itself', '', ''],
    ['an IPv4 part over 255 is not an address: itself', '192.0.2.256', '192.0.2.256'],
    ['a padded address is not an address: itself', ' 192.0.2.1', ' 192.0.2.1'],
    ['a prefix is not an address: itself', '2001:db8::1/64', '2001:db8::1/64'],
    ['a bracketed address is not an address: itself', '[2001:db8::1]', '[2001:db8::1]'],
  ])('%s', (_behaviour, address, expected) => {
    expect(clientGroup(address)).toBe(expected);
  });
});
