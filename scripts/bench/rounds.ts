// Two servers measured in adjacent pairs, which goes first alternating by round: on this VM one
// wrk run of either swings by ±30 % with other tenants' load, and two runs seconds apart share
// the machine's state far more than two runs minutes apart. Each side reports its median round;
// the ratio is the median of the rounds' ratios.
import { median, type Durations } from './common.ts';
import type { Server } from './processes.ts';
import { measure, type CpuGroups, type Endpoint, type WrkResult } from './wrk.ts';

/** One side of a comparison: a server, the endpoint read from it, and whose CPU time to count. */
export interface Side {
  server: Server;
  endpoint: Endpoint;
  cpu?: CpuGroups;
}

/** A side's median round, every round's req/s, and (with `cpu`) CPU µs per request. */
export type RoundSummary = WrkResult & { rounds: number[]; cpuUs?: Record<string, number> };

/** The round with the median req/s, so its p50 and p99 come from the same run. */
export function medianRound(rounds: WrkResult[]): RoundSummary {
  const sorted = [...rounds].sort((a, b) => a.rps - b.rps);
  return { ...sorted[(sorted.length - 1) >> 1], rounds: rounds.map((r) => r.rps) };
}

/** CPU microseconds per request of each pid group, over all of one side's rounds. */
export function cpuPerRequest(results: WrkResult[]): Record<string, number> | undefined {
  const first = results[0]?.cpuS;
  if (first === undefined) return undefined;
  const requests = results.reduce((sum, r) => sum + r.requests, 0);
  const perRequest: Record<string, number> = {};
  for (const name of Object.keys(first)) {
    const seconds = results.reduce((sum, r) => sum + (r.cpuS?.[name] ?? NaN), 0);
    perRequest[name] = (seconds * 1e6) / requests;
  }
  return perRequest;
}

/**
 * `first` and `second` are `{ server, endpoint, cpu? }` (see `measure`). Round 0 runs `first`
 * first and warms both up; later rounds warm up only with `warmupEveryRound` (a server idle
 * for a whole run may have let its pooled connections go). Returns each side's median round
 * (with every round's req/s and, with `cpu`, CPU µs per request) and `ratio`, the median of
 * second/first req/s per round.
 */
export async function alternateRounds(
  first: Side,
  second: Side,
  {
    rounds,
    durations,
    tmp,
    warmupEveryRound = false,
  }: { rounds: number; durations: Durations; tmp: string; warmupEveryRound?: boolean },
): Promise<{ first: RoundSummary; second: RoundSummary; ratio: number }> {
  const results: [WrkResult[], WrkResult[]] = [[], []];
  for (let round = 0; round < rounds; round += 1) {
    const these = round === 0 || warmupEveryRound ? durations : { ...durations, warmup: 0 };
    const pair: [Side, WrkResult[]][] = [
      [first, results[0]],
      [second, results[1]],
    ];
    if (round % 2 === 1) pair.reverse();
    for (const [side, into] of pair) {
      into.push(await measure(side.server, side.endpoint, these, tmp, { cpu: side.cpu }));
    }
  }
  const side = (runs: WrkResult[]): RoundSummary => {
    const cpuUs = cpuPerRequest(runs);
    return cpuUs === undefined ? medianRound(runs) : { ...medianRound(runs), cpuUs };
  };
  const [a, b] = results;
  return {
    first: side(a),
    second: side(b),
    ratio: median(b.map((result, i) => result.rps / a[i].rps)),
  };
}
