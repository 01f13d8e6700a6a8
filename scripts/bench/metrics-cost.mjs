// What Prometheus metrics cost the session read: Gatehouse with METRICS_PORT unset vs set to a
// free port, otherwise identical (SQLite, fast paths on, same core, same wrk script), in
// alternating rounds. Target: at most 3 % fewer reads per second with metrics on.
import { email, gatehouseArgs, log, password } from './common.mjs';
import { addUser, benchEnv, randomSecret, sqliteUrl } from './gatehouse.mjs';
import { probe, signIn } from './http.mjs';
import { freePort, makeTemp, startServer, stopChild } from './processes.mjs';
import { alternateRounds } from './rounds.mjs';
import { browserCookie, sessionJarEndpoint } from './session-read.mjs';

export const metricsMaxCostPct = 3;
// Five: a single round's req/s moves by ±5 % on this VM, more than the cost being measured.
export const metricsRounds = 5;
/** wrk runs this file makes (each side of each round), for the runner's watchdog. */
export const metricsWrkRuns = 2 * metricsRounds;

/**
 * Each side's median round, `costPct` (1 − the median of the rounds' on/off req/s ratios, in
 * %), the metrics port, and what `GET /metrics` there answered (null: nothing listened, so
 * this build has no metrics and the cost is noise around 0).
 */
export async function benchMetricsCost(durations) {
  const secret = randomSecret();
  const metricsPort = await freePort();
  const start = async (label, extra) => {
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
  log(`session read with metrics off vs on (METRICS_PORT=${metricsPort})`);
  const off = await start('off', {});
  const on = await start('on', { METRICS_PORT: String(metricsPort) });
  const metricsStatus = await probe(`http://127.0.0.1:${metricsPort}/metrics`);
  const rounds = await alternateRounds(off, on, {
    rounds: metricsRounds,
    durations,
    tmp: off.dataDir,
    warmupEveryRound: true,
  });
  await Promise.all([stopChild(off.server.child), stopChild(on.server.child)]);
  return {
    off: rounds.first,
    on: rounds.second,
    costPct: (1 - rounds.ratio) * 100,
    metricsPort,
    metricsStatus,
  };
}
