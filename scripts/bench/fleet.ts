// Fleet throughput: session reads through nginx to 1, 2 and 3 Gatehouse instances on one
// PostgreSQL (test/fleet/harness/throughput.ts starts each fleet, measures with wrk, stops it).
// On this 2-core machine the instances, PostgreSQL, nginx and wrk all share the same two cores,
// so the figures say what the fleet costs here, not how it scales on real machines.
import { execFileSync } from 'node:child_process';
import { fleetUnavailable } from '../../test/fleet/harness/fleet.ts';
import { stopAll } from '../../test/fleet/harness/processes.ts';
import { fleetThroughput } from '../../test/fleet/harness/throughput.ts';
import { log, type Durations } from './common.ts';
import { allowedCpus } from './machine.ts';
import { onCleanup, setup } from './processes.ts';

export const fleetCounts = [1, 2, 3];
/** wrk runs this file makes, for the runner's watchdog (each fleet also starts and stops). */
export const fleetWrkRuns = fleetCounts.length * 2;

/** What one fleet's wrk run through nginx read. */
export interface FleetRun {
  instances: number;
  durationSeconds: number;
  requestsPerSecond: number;
  latencyMs: { p50: number; p90: number; p99: number };
  non2xx: number;
}

/** `{ skipped }` when a fleet cannot run here; else one result per instance count. */
/** Why the fleet could not run here, or one run per instance count. */
export type FleetBench =
  { skipped: string; results?: undefined } | { skipped?: undefined; results: FleetRun[] };

export async function benchFleet(durations: Durations): Promise<FleetBench> {
  const unavailable = fleetUnavailable();
  if (unavailable !== undefined) return { skipped: unavailable };
  onCleanup(stopAll);
  // The runner pinned itself to wrk's core, and children inherit that: a fleet gets them all,
  // as it would on a machine of its own (it runs last, so nothing else is measured after).
  if (setup.taskset) {
    execFileSync('taskset', ['-a', '-cp', allowedCpus().join(','), String(process.pid)], {
      stdio: 'ignore',
    });
  }
  const results: FleetRun[] = [];
  for (const instances of fleetCounts) {
    log(`fleet throughput: ${instances} instance(s) behind nginx (${durations.seconds}s)`);
    results.push(
      await fleetThroughput({
        instances,
        durationSeconds: durations.seconds,
        env: { THROTTLE_IP_MAX_ATTEMPTS: '1000000', THROTTLE_EMAIL_MAX_ATTEMPTS: '1000000' },
      }),
    );
  }
  return { results };
}
