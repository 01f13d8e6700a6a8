import ipaddr from 'ipaddr.js';

/**
 * An address as a user's own event list shows it: the network, not the host (IPv4 /24,
 * IPv6 /48), so a list read over someone's shoulder does not hand out their address. IPv4
 * mapped into IPv6 counts as IPv4; anything that is no address (the CLI's events) is shown as
 * it is.
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
