import ipaddr from 'ipaddr.js';

/**
 * An address as a user's own event list shows it: the network, not the host (IPv4 /24,
 * IPv6 /48), so a list read over someone's shoulder does not hand out their address. IPv4
 * mapped into IPv6 counts as IPv4; anything that is no address (the CLI's events) is shown as
 * it is. It is also the key of a network the new-device notice compares (sign_in_places).
 */
export function ipPrefix(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') {
    const [a, b, c] = parsed.toByteArray();
    return `${a}.${b}.${c}.0/24`;
  }
  const bytes = parsed.toByteArray().slice(0, 6);
  return `${ipaddr.fromByteArray([...bytes, ...new Array<number>(10).fill(0)]).toString()}/48`;
}

/** How a loopback address (127.0.0.0/8, ::1, IPv4 mapped or not) reads where it is shown. */
export const loopbackShown = 'this computer (loopback)';

/**
 * The network of `address` as a person reads it (the account page's history and sessions, the
 * account API, the new-device mail): `ipPrefix`'s, but a loopback address named for what it is.
 * "127.0.0.0/24" or "::/48" reads as a network somewhere; a sign-in from loopback came from the
 * machine Gatehouse runs on (a proxy or app there that did not pass the visitor's address on).
 */
export function shownNetwork(address: string): string {
  if (ipaddr.isValid(address) && ipaddr.process(address).range() === 'loopback')
    return loopbackShown;
  return ipPrefix(address);
}
