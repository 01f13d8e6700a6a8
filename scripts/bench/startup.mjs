// Start-up: spawn → first 200 from /api/health, median of several starts, and RSS once idle.
import { median, sleep } from './common.mjs';
import { rssMb } from './machine.mjs';
import { freePort, startServer, stopChild } from './processes.mjs';

export const startupRuns = 5;

/** Timed starts; the last one stays up for the load runs (fresh port each time). */
export async function startTimed(label, nodeArgs, makeEnv) {
  const startups = [];
  for (let run = 1; run <= startupRuns; run += 1) {
    const server = await startServer(label, nodeArgs, makeEnv(await freePort()));
    startups.push(server.startupMs);
    if (run < startupRuns) await stopChild(server.child);
    else {
      // Idle means settled: let start-up garbage and lazy timers run before reading RSS.
      await sleep(1000);
      return { ...server, startupMs: median(startups), startups, rssIdle: rssMb(server.pid) };
    }
  }
}
