// Health throughput: the bare node:http baseline (baseline.mjs), started and timed
// like Gatehouse, and measured against Gatehouse in alternating rounds.
import { baselineMain, log, type Durations } from './common.ts';
import { rssMb } from './machine.ts';
import { stopChild, type Server } from './processes.ts';
import { alternateRounds, type RoundSummary } from './rounds.ts';
import { startTimed, startupRuns, type TimedServer } from './startup.ts';
import type { Endpoint } from './wrk.ts';

export const healthRounds = 3;

export const healthEndpoint: Endpoint = {
  key: 'health',
  name: 'health',
  path: '/api/health',
  valid: (body) => (JSON.parse(body) as { status?: unknown }).status === 'ok',
};

/** The baseline stays up (idle) until its health rounds alternate with Gatehouse's. */
export async function startBaseline(): Promise<TimedServer> {
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
/** The baseline's figures, beside Gatehouse's. */
export interface BaselineResult {
  startupMs: number;
  startups: number[];
  rssIdle: number;
  rssAfter: number;
  health: RoundSummary;
}

/** Gatehouse's health rounds, with the median of the rounds' Gatehouse / baseline ratios. */
export type PairedHealth = RoundSummary & { pairedRatio: number };

export async function alternatingHealth(
  baselineServer: TimedServer,
  server: Server,
  durations: Durations,
  tmp: string,
): Promise<{ baseline: BaselineResult; health: PairedHealth }> {
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
