// Health throughput: the bare node:http baseline (scripts/bench-baseline.mjs), started and timed
// like Gatehouse, and measured against Gatehouse in alternating rounds.
import { baselineMain, log } from './common.mjs';
import { rssMb } from './machine.mjs';
import { stopChild } from './processes.mjs';
import { alternateRounds } from './rounds.mjs';
import { startTimed, startupRuns } from './startup.mjs';

export const healthRounds = 3;

export const healthEndpoint = {
  key: 'health',
  name: 'health',
  path: '/api/health',
  valid: (body) => JSON.parse(body).status === 'ok',
};

/** The baseline stays up (idle) until its health rounds alternate with Gatehouse's. */
export async function startBaseline() {
  log(`baseline (node:http): start-up x${startupRuns}`);
  return startTimed('baseline', [baselineMain], (port) => ({
    PORT: String(port),
    HOST: '127.0.0.1',
  }));
}

/**
 * Health on the baseline and on Gatehouse in `healthRounds` alternating rounds; stops the
 * baseline and returns its figures with Gatehouse's (`pairedRatio`: Gatehouse / baseline).
 */
export async function alternatingHealth(baselineServer, server, durations, tmp) {
  const { first, second, ratio } = await alternateRounds(
    { server: baselineServer, endpoint: healthEndpoint },
    { server, endpoint: healthEndpoint },
    { rounds: healthRounds, durations, tmp },
  );
  const rssAfter = rssMb(baselineServer.pid);
  await stopChild(baselineServer.child);
  return {
    baseline: {
      startupMs: baselineServer.startupMs,
      startups: baselineServer.startups,
      rssIdle: baselineServer.rssIdle,
      rssAfter,
      health: first,
    },
    health: { ...second, pairedRatio: ratio },
  };
}
