import fs from 'node:fs';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { clientGroup } from '../traffic/client-group.js';

export interface ConnectionLimits {
  /** Open connections at most; past it a new connection is closed at once. */
  max: number;
  /** Open connections at most from one client address (IPv6: one /64). */
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
 * The defaults: most of the descriptor limit for connections (the rest is for the database,
 * logs and the runtime), and an eighth of that for one address, so one client holding idle
 * connections cannot starve another client's requests or a platform's health probe.
 */
export function defaultConnectionLimits(fileLimit: number | undefined): ConnectionLimits {
  const max = Math.max(64, Math.min(100_000, Math.floor((fileLimit ?? 1024) * 0.8)));
  return { max, perAddress: Math.max(8, Math.floor(max / 8)) };
}

/**
 * Closes a new connection at once when the process or its client address is at its limit, and
 * warns (at most every 10 s) while that happens. Counting is by the socket's peer address: a
 * proxy in front is one address, so set `perAddress` to the whole limit behind one.
 */
export function limitConnections(
  server: Server,
  limits: ConnectionLimits,
  warn: (details: Record<string, unknown>, message: string) => void,
  now = () => Date.now(),
): void {
  let open = 0;
  const byAddress = new Map<string, number>();
  let lastWarningAt = -Infinity;
  let refusedSinceWarning = 0;
  server.on('connection', (socket: Socket) => {
    const group = clientGroup(socket.remoteAddress ?? '');
    const own = byAddress.get(group) ?? 0;
    if (open >= limits.max || own >= limits.perAddress) {
      socket.destroy();
      refusedSinceWarning += 1;
      if (now() - lastWarningAt >= 10_000) {
        warn(
          {
            open,
            max: limits.max,
            perAddress: limits.perAddress,
            refused: refusedSinceWarning,
            atAddressLimit: own >= limits.perAddress,
          },
          'connection limit reached: new connections are being closed',
        );
        lastWarningAt = now();
        refusedSinceWarning = 0;
      }
      return;
    }
    open += 1;
    byAddress.set(group, own + 1);
    socket.once('close', () => {
      open -= 1;
      const left = (byAddress.get(group) ?? 1) - 1;
      if (left <= 0) byAddress.delete(group);
      else byAddress.set(group, left);
    });
  });
}
