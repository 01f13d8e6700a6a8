// Start-up: spawn → first 200 from /api/health, median of several starts, and RSS once idle.
import type { StdioOptions } from 'node:child_process';
import { median, sleep, type Env } from './common.ts';
import { rssMb } from './machine.ts';
import { freePort, startServer, stopChild, type Server } from './processes.ts';

export const startupRuns = 5;

/** A server after its timed starts: the median, every start, and its RSS once idle. */
export type TimedServer = Server & { startups: number[]; rssIdle: number };

/**
 * Timed starts; the last one stays up for the load runs (fresh port each time). `stdio` says
 * where the server's output goes (default: a pipe the runner drains).
 */
export async function startTimed(
  label: string,
  nodeArgs: string[],
  makeEnv: (port: number) => Env,
  { stdio }: { stdio?: StdioOptions } = {},
): Promise<TimedServer> {
  const startups: number[] = [];
  for (let run = 1; ; run += 1) {
    const server = await startServer(label, nodeArgs, makeEnv(await freePort()), { stdio });
    startups.push(server.startupMs);
    if (run < startupRuns) await stopChild(server.child);
    else {
      // Idle means settled: let start-up garbage and lazy timers run before reading RSS.
      await sleep(1000);
      return { ...server, startupMs: median(startups), startups, rssIdle: rssMb(server.pid) };
    }
  }
}
