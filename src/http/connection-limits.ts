import fs from 'node:fs';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import os from 'node:os';
import ipaddr from 'ipaddr.js';

export interface ConnectionLimits {
  /** Open connections at most; past it the oldest idle one is closed, or else the new one. */
  max: number;
  /** Open connections at most from one client address (IPv6: one /48). */
  perAddress: number;
}

/** Descriptors the process may open (Linux: /proc/self/limits), or undefined elsewhere. */
export function openFileLimit(read = () => fs.readFileSync('/proc/self/limits', 'utf8')) {
  try {
    const line = read()
      .split('\n')
      .find((entry) => entry.startsWith('Max open files'));
    const soft = Number(line?.split(/\s{2,}/)[1]);
    return Number.isInteger(soft) && soft > 0 ? soft : undefined;
  } catch {
    // No /proc (macOS, a locked-down container): the caller falls back to a fixed default.
    return undefined;
  }
}

/**
 * The memory the process may use: the container's limit (cgroup v2, then v1) when it has one,
 * else the machine's (a Fly VM is its own machine).
 */
export function memoryLimitBytes(
  read = (file: string) => fs.readFileSync(file, 'utf8'),
  totalBytes = os.totalmem(),
): number {
  for (const file of ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes']) {
    try {
      const limit = Number(read(file).trim());
      // "max" (v2) or a huge number (v1) means none.
      if (Number.isSafeInteger(limit) && limit > 0) return Math.min(limit, totalBytes);
    } catch {
      // Not in a cgroup that has this file: try the next, then the machine's memory.
    }
  }
  return totalBytes;
}

/**
 * What one open connection may cost: an idle kept-alive connection measured ~29 KiB of RSS,
 * plus a request in progress and its unsent answer (src/http/pipeline-limit.ts bounds those).
 */
export const connectionCostBytes = 64 * 1024;

/**
 * The defaults: a quarter of the memory limit for connections (256 MiB, as shipped: 1,024), and
 * at most 80 % of the descriptor limit (the rest is for the database, logs and the runtime); an
 * eighth of that for one address. Idle connections give way to new ones (`limitConnections`),
 * so the per-address share bounds connections busy at once, not how many clients are served.
 */
export function defaultConnectionLimits(
  fileLimit: number | undefined,
  memoryBytes = memoryLimitBytes(),
): ConnectionLimits {
  const byMemory = Math.floor(memoryBytes / 4 / connectionCostBytes);
  const byFiles = Math.floor((fileLimit ?? 1024) * 0.8);
  const max = Math.max(64, Math.min(100_000, byMemory, byFiles));
  return { max, perAddress: Math.max(8, Math.floor(max / 8)) };
}

/**
 * The unit connections are counted by: an IPv4 address, or the /48 of an IPv6 address. Wider
 * than the sign-in throttle's /64 (src/traffic/client-group.ts): one subscriber is often handed
 * a /56 or a /48, and holding connections needs no more than that. IPv4-mapped counts as IPv4.
 */
export function connectionGroup(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const bytes = [...parsed.toByteArray().slice(0, 6), ...new Array<number>(10).fill(0)];
  return `${ipaddr.fromByteArray(bytes).toString()}/48`;
}

/** The oldest connection of `sockets` (insertion order) that is idle, if any. */
function oldestIdle(sockets: Set<Socket>, isIdle: (socket: Socket) => boolean) {
  for (const socket of sockets) if (isIdle(socket)) return socket;
  return undefined;
}

/**
 * Caps open connections, in all and per address group. At a cap, a new connection does not
 * wait on those already held: the oldest idle one (kept alive between requests, or never
 * started) gives way, taken from the new connection's own group at the per-address cap, and
 * from the group holding the most at the process-wide cap, so a few addresses holding idle
 * connections cannot refuse the rest. Only when none is idle is the new connection closed at
 * once. Either is warned about, at most every 10 s. Counting is by the socket's peer address:
 * a proxy in front is one address, so set `perAddress` to the whole limit behind one.
 */
export function limitConnections(
  server: Server,
  limits: ConnectionLimits,
  warn: (details: Record<string, unknown>, message: string) => void,
  isIdle: (socket: Socket) => boolean = () => false,
  now = () => Date.now(),
): void {
  let open = 0;
  const groups = new Map<string, Set<Socket>>();
  let lastWarningAt = -Infinity;
  let refusedSinceWarning = 0;
  let closedSinceWarning = 0;
  const forget = (group: string, socket: Socket) => {
    const sockets = groups.get(group);
    if (sockets?.delete(socket) !== true) return;
    open -= 1;
    if (sockets.size === 0) groups.delete(group);
  };
  const victimFor = (group: string, own: Set<Socket> | undefined): [string, Socket] | undefined => {
    if (own !== undefined && own.size >= limits.perAddress) {
      const socket = oldestIdle(own, isIdle);
      return socket && [group, socket];
    }
    if (open < limits.max) return undefined;
    // One pass, no sort: it runs for every new connection while the process is at its cap.
    let victim: [string, Socket] | undefined;
    let victimGroupSize = 0;
    for (const [candidate, sockets] of groups) {
      if (sockets.size <= victimGroupSize) continue;
      const socket = oldestIdle(sockets, isIdle);
      if (socket === undefined) continue;
      victim = [candidate, socket];
      victimGroupSize = sockets.size;
    }
    return victim;
  };
  const warnAtMostEvery10s = (own: number) => {
    if (now() - lastWarningAt < 10_000) return;
    warn(
      {
        open,
        max: limits.max,
        perAddress: limits.perAddress,
        refused: refusedSinceWarning,
        idleClosed: closedSinceWarning,
        atAddressLimit: own >= limits.perAddress,
      },
      'connection limit reached: idle connections are being closed, or else new ones',
    );
    lastWarningAt = now();
    refusedSinceWarning = 0;
    closedSinceWarning = 0;
  };
  server.on('connection', (socket: Socket) => {
    const group = connectionGroup(socket.remoteAddress ?? '');
    const own = groups.get(group);
    const ownCount = own?.size ?? 0;
    if (ownCount >= limits.perAddress || open >= limits.max) {
      const victim = victimFor(group, own);
      if (victim === undefined) {
        socket.destroy();
        refusedSinceWarning += 1;
        warnAtMostEvery10s(ownCount);
        return;
      }
      forget(...victim);
      victim[1].destroy();
      closedSinceWarning += 1;
      warnAtMostEvery10s(ownCount);
    }
    open += 1;
    const sockets = groups.get(group) ?? new Set<Socket>();
    groups.set(group, sockets.add(socket));
    socket.once('close', () => forget(group, socket));
  });
}
