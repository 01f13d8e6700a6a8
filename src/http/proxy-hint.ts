import { BlockList, isIPv4 } from 'node:net';
import type { FastifyInstance } from 'fastify';

/** Forwarded requests looked at before deciding; all from one such address: the warning. */
export const forwardedRequestsChecked = 10;
/** Requests of any kind after which the check stops, warning or not. */
const requestsCheckedMax = 200;

// Where a reverse proxy in front of the service usually is: this machine, a private network,
// a pod or container network (RFC 1918, RFC 6598 shared space, link-local, ULA). Made on the
// first forwarded request, not at start-up: node:net's BlockList loads its own modules.
let proxyRangesMade: BlockList | undefined;
function proxyRanges(): BlockList {
  if (proxyRangesMade !== undefined) return proxyRangesMade;
  const ranges = new BlockList();
  for (const [network, prefix] of [
    ['127.0.0.0', 8],
    ['10.0.0.0', 8],
    ['172.16.0.0', 12],
    ['192.168.0.0', 16],
    ['100.64.0.0', 10],
    ['169.254.0.0', 16],
  ] as const)
    ranges.addSubnet(network, prefix, 'ipv4');
  ranges.addAddress('::1', 'ipv6');
  ranges.addSubnet('fc00::', 7, 'ipv6');
  ranges.addSubnet('fe80::', 10, 'ipv6');
  return (proxyRangesMade = ranges);
}

/** Whether a socket address looks like a proxy's: loopback or private (IPv4-mapped too). */
export function looksLikeProxy(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  const ip = mapped ?? address;
  return proxyRanges().check(ip, isIPv4(ip) ? 'ipv4' : 'ipv6');
}

/**
 * Without TRUST_PROXY the client is the socket's address. When the first forwarded requests
 * (with X-Forwarded-For) all come from one loopback or private address, a proxy is most likely
 * in front and not trusted: every client is then that one address and shares one per-client
 * budget (the mail requests', the sign-in throttle's per-address counters). Says so once,
 * naming TRUST_PROXY. Only Fastify's requests are looked at (the session read answered in
 * front of it never is), and only the first few: after that the hook is one comparison.
 */
export function installProxyHint(
  app: FastifyInstance,
  warn: (fields: object, message: string) => void,
): void {
  let checking = true;
  let requests = 0;
  let forwarded = 0;
  let address: string | undefined;
  app.addHook('onRequest', (request, _reply, done) => {
    if (!checking) return done();
    requests += 1;
    if (requests > requestsCheckedMax) checking = false;
    else if (request.headers['x-forwarded-for'] !== undefined) {
      const from = request.socket.remoteAddress ?? '';
      address ??= from;
      if (from !== address || !looksLikeProxy(from)) checking = false;
      else if ((forwarded += 1) >= forwardedRequestsChecked) {
        checking = false;
        warn(
          { setting: 'TRUST_PROXY', address },
          `requests come through ${address} with X-Forwarded-For, and TRUST_PROXY is not set: every client counts as ${address}, so all of them share one per-client budget (mail requests, sign-in throttling). If a proxy is in front, set TRUST_PROXY to its address (e.g. TRUST_PROXY=${address})`,
        );
      }
    }
    done();
  });
}
