// What Prometheus metrics cost the session read: Gatehouse with METRICS_PORT unset vs set to a
// free port, otherwise identical (SQLite, fast paths on, same core, same wrk script), a new
// pair of servers each round. Target: at most 3 % fewer reads per second with metrics on.
import { email, gatehouseArgs, log, password, type Durations, type Env } from './common.ts';
import { addUser, benchEnv, randomSecret, sqliteUrl } from './gatehouse.ts';
import { probe, signIn } from './http.ts';
import { freePort, makeTemp, startServer, stopChild } from './processes.ts';
import { cpuPerRequest, medianRound, type RoundSummary, type Side } from './rounds.ts';
import { measure, type WrkResult } from './wrk.ts';
import { browserCookie, sessionJarEndpoint } from './session-read.ts';

export const metricsMaxCostPct = 3;
// Eight pairs, four in each order: one server process differs from an identical one by up to
// 7 % here, and the one started and measured first in a pair ran 5-10 % faster in every round
// of the first run of this design, whichever it was.
export const metricsRounds = 8;
/** wrk runs this file makes (each side of each round), for the runner's watchdog. */
export const metricsWrkRuns = 2 * metricsRounds;

/**
 * Each side's median round, `costPct` (1 − the geometric mean of the rounds' on/off req/s
 * ratios, in %), the metrics port, and what `GET /metrics` there answered (null: nothing listened, so
 * this build has no metrics and the cost is noise around 0).
 *
 * Every round starts a fresh pair of servers (which starts first alternating) and stops it
 * after: two identical servers measured side by side differ by up to 7 % here for their
 * whole lifetime (an A/A run of this very comparison read 7.3 % and 6.8 % with the same pair
 * of processes kept across rounds, -0.1 % with another pair), more than the cost measured.
 */
const geometricMean = (values: number[]): number =>
  Math.exp(values.reduce((sum, value) => sum + Math.log(value), 0) / values.length);

/** Each side's median round (with CPU µs per read), the cost in %, and what /metrics answered. */
export interface MetricsCost {
  off: RoundSummary;
  on: RoundSummary;
  costPct: number;
  metricsPort: number;
  metricsStatus: number | null;
}

type Metrics = 'off' | 'on';

export async function benchMetricsCost(durations: Durations): Promise<MetricsCost> {
  const secret = randomSecret();
  const metricsPort = await freePort();
  const start = async (label: Metrics, extra: Env): Promise<Side & { dataDir: string }> => {
    const dataDir = makeTemp(`metrics-${label}`);
    addUser(
      { DATABASE_URL: sqliteUrl(dataDir), DATA_DIR: dataDir },
      { email, password, name: 'Bench' },
    );
    const env = benchEnv({ port: await freePort(), dataDir, secret, fastPaths: true, ...extra });
    const server = await startServer(`gatehouse metrics ${label}`, gatehouseArgs, env);
    const jar = await signIn(server.base);
    const cpu = async () => ({ gatehouse: [server.pid] });
    return { server, endpoint: sessionJarEndpoint(browserCookie(jar)), dataDir, cpu };
  };
  log(`session read with metrics off vs on (METRICS_PORT=${metricsPort}), a new pair each round`);
  const results: Record<Metrics, WrkResult[]> = { off: [], on: [] };
  let metricsStatus: number | null = null;
  for (let round = 0; round < metricsRounds; round += 1) {
    const order: Metrics[] = round % 2 === 0 ? ['off', 'on'] : ['on', 'off'];
    // Both labels are filled in just below.
    const sides = {} as Record<Metrics, Side & { dataDir: string }>;
    for (const label of order) {
      sides[label] = await start(
        label,
        label === 'on' ? { METRICS_PORT: String(metricsPort) } : {},
      );
    }
    metricsStatus ??= await probe(`http://127.0.0.1:${metricsPort}/metrics`);
    for (const label of order) {
      const side = sides[label];
      results[label].push(
        await measure(side.server, side.endpoint, durations, side.dataDir, { cpu: side.cpu }),
      );
    }
    await Promise.all(order.map((label) => stopChild(sides[label].server.child)));
  }
  const summary = (runs: WrkResult[]): RoundSummary => ({
    ...medianRound(runs),
    cpuUs: cpuPerRequest(runs),
  });
  return {
    off: summary(results.off),
    on: summary(results.on),
    // The geometric mean of the rounds' on/off ratios: with each order equally often, the
    // first-in-a-pair advantage cancels out (a median would pick one order's round).
    costPct: (1 - geometricMean(results.on.map((r, i) => r.rps / results.off[i].rps))) * 100,
    metricsPort,
    metricsStatus,
  };
}
