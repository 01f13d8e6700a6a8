// Two servers measured in adjacent pairs, which goes first alternating by round: on this VM one
// wrk run of either swings by ±30 % with other tenants' load, and two runs seconds apart share
// the machine's state far more than two runs minutes apart. Each side reports its median round;
// the ratio is the median of the rounds' ratios.
import { median } from './common.mjs';
import { measure } from './wrk.mjs';

/** The round with the median req/s, so its p50 and p99 come from the same run. */
export function medianRound(rounds) {
  const sorted = [...rounds].sort((a, b) => a.rps - b.rps);
  return { ...sorted[(sorted.length - 1) >> 1], rounds: rounds.map((r) => r.rps) };
}

/** CPU microseconds per request of each pid group, over all of one side's rounds. */
export function cpuPerRequest(results) {
  if (results[0]?.cpuS === undefined) return undefined;
  const requests = results.reduce((sum, r) => sum + r.requests, 0);
  const perRequest = {};
  for (const name of Object.keys(results[0].cpuS)) {
    const seconds = results.reduce((sum, r) => sum + r.cpuS[name], 0);
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
  first,
  second,
  { rounds, durations, tmp, warmupEveryRound = false },
) {
  const results = [[], []];
  for (let round = 0; round < rounds; round += 1) {
    const these = round === 0 || warmupEveryRound ? durations : { ...durations, warmup: 0 };
    const pair = [
      [first, results[0]],
      [second, results[1]],
    ];
    if (round % 2 === 1) pair.reverse();
    for (const [side, into] of pair) {
      into.push(await measure(side.server, side.endpoint, these, tmp, { cpu: side.cpu }));
    }
  }
  const side = (runs) => {
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
