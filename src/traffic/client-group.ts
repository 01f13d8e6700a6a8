import ipaddr from 'ipaddr.js';

/**
 * The unit sign-in limits count a client by: its IPv4 address, or the /64 of its IPv6 address.
 * One IPv6 subscriber is usually handed a whole /64 (often more), so counting single IPv6
 * addresses would give one attacker 2^64 fresh budgets. IPv4-mapped IPv6 counts as IPv4.
 */
export function clientGroup(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const bytes = parsed.toByteArray().slice(0, 8);
  return `${ipaddr.fromByteArray([...bytes, 0, 0, 0, 0, 0, 0, 0, 0]).toString()}/64`;
}
