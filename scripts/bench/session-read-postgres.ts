// The session read with a cookie jar on PostgreSQL (same machine, loopback) beside SQLite: one
// Gatehouse per engine, pinned to the same core as the SQLite suite, read with the same wrk
// script in alternating rounds. Target: PostgreSQL ≥ 0.6× SQLite with fast paths on.
import { email, gatehouseArgs, log, password, type Durations, type Env } from './common.ts';
import { addUser, benchEnv, randomSecret, sqliteUrl } from './gatehouse.ts';
import { signIn } from './http.ts';
import { backendPids, createBenchDatabase, postgresUrl } from './postgres.ts';
import { freePort, makeTemp, startServer, stopChild, type Server } from './processes.ts';
import { alternateRounds, type RoundSummary, type Side } from './rounds.ts';
import { browserCookie, sessionJarsEndpoint } from './session-read.ts';

export const postgresTargetRatio = 0.6;
/** Sessions the reads go round: one per wrk connection (wrk -c32). */
const sessionsRead = 32;
/** Rounds per mode; fast paths off is a comparison only, so one pair is enough there. */
export const postgresRounds = { on: 3, off: 1 };
/** wrk runs this file makes (each side of each round), for the runner's watchdog. */
export const postgresWrkRuns = 2 * (postgresRounds.on + postgresRounds.off);

/**
 * `{ skipped }` without PostgreSQL; else the PostgreSQL server's version and, per mode (`on`,
 * `off`), each engine's median round with CPU µs per read, and `ratio` (PostgreSQL / SQLite,
 * median of the rounds' req/s ratios).
 */
/** One mode's figures: each engine's median round, and the median PostgreSQL / SQLite ratio. */
export interface PostgresMode {
  sqlite: RoundSummary;
  postgres: RoundSummary;
  ratio: number;
}

export type PostgresResult =
  | { skipped: string }
  | { skipped?: undefined; version: string; on: PostgresMode; off: PostgresMode };

type Mode = 'on' | 'off';

export async function benchSessionReadPostgres(durations: Durations): Promise<PostgresResult> {
  const adminUrl = postgresUrl;
  if (adminUrl === undefined) {
    return {
      skipped:
        'TEST_POSTGRES_URL is not set (PostgreSQL is not installed, or the bench was not run as `npm run bench`, which starts one with scripts/with-postgres.sh)',
    };
  }
  const database = await createBenchDatabase(adminUrl);
  const dataDir = makeTemp('postgres');
  const secret = randomSecret();
  const account = { email, password, name: 'Bench' };
  addUser({ DATABASE_URL: sqliteUrl(dataDir), DATA_DIR: dataDir }, account);
  addUser({ DATABASE_URL: database.url, DATA_DIR: dataDir }, account);

  const measureMode = async (mode: Mode): Promise<PostgresMode> => {
    const fastPaths = mode === 'on';
    const start = async (engine: string, extra: Env): Promise<Server> => {
      const port = await freePort();
      const env = benchEnv({ port, dataDir, secret, fastPaths, ...extra });
      return startServer(`gatehouse ${engine} fast paths ${mode}`, gatehouseArgs, env);
    };
    log(`session read on PostgreSQL beside SQLite, fast paths ${mode}`);
    const sqlite = await start('SQLite', {});
    const postgres = await start('PostgreSQL', { DATABASE_URL: database.url });
    // Distinct sessions, one per wrk connection, as many browsers polling would send: the
    // PostgreSQL check batches the reads of one event-loop round, and one cookie repeated would
    // let it answer them all with one row (flattering it).
    const side = async (server: Server, cpu: Side['cpu']): Promise<Side> => {
      const cookies: string[] = [];
      for (let i = 0; i < sessionsRead; i += 1)
        cookies.push(browserCookie(await signIn(server.base)));
      return { server, endpoint: sessionJarsEndpoint(cookies), cpu };
    };
    const rounds = await alternateRounds(
      await side(sqlite, async () => ({ gatehouse: [sqlite.pid] })),
      await side(postgres, async () => ({
        gatehouse: [postgres.pid],
        postgres: await backendPids(adminUrl, database.name),
      })),
      { rounds: postgresRounds[mode], durations, tmp: dataDir, warmupEveryRound: true },
    );
    await Promise.all([stopChild(sqlite.child), stopChild(postgres.child)]);
    return { sqlite: rounds.first, postgres: rounds.second, ratio: rounds.ratio };
  };
  // Fast paths on first, then off.
  const on = await measureMode('on');
  const off = await measureMode('off');
  return { version: database.version, on, off };
}
