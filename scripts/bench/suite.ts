// Every measurement of one Gatehouse configuration (SQLite, fast paths on or off), in order:
// start-up, sign-in, refusal timing, the wrk runs, RSS, and health under a flood of sign-ins.
import { email, gatehouseArgs, log, password, type Durations } from './common.ts';
import { addUser, benchEnv, randomSecret, sqliteUrl } from './gatehouse.ts';
import {
  alternatingHealth,
  healthEndpoint,
  type BaselineResult,
  type PairedHealth,
} from './health.ts';
import { healthUnderHashing, hashingLoad, type UnderHashing } from './health-under-hashing.ts';
import { signIn } from './http.ts';
import { rssMb } from './machine.ts';
import { makeTemp, stopChild } from './processes.ts';
import { refusalTiming, timingSamples, type RefusalTiming } from './refusal-timing.ts';
import {
  browserCookie,
  csrfEndpoint,
  sessionJarEndpoint,
  sessionNoneEndpoint,
} from './session-read.ts';
import {
  signInConcurrency,
  signInConcurrentTotal,
  signInRates,
  signInSequential,
  type Rates,
} from './signin.ts';
import { startTimed, startupRuns, type TimedServer } from './startup.ts';
import { measure, type WrkResult } from './wrk.ts';

/**
 * The wrk runs of one configuration, by endpoint; with a baseline, health holds the paired
 * rounds (`rounds`, `pairedRatio`).
 */
export interface SuiteHttp {
  health: WrkResult & Partial<PairedHealth>;
  sessionJar: WrkResult;
  sessionNone: WrkResult;
  csrf: WrkResult;
}

/** Everything measured on one configuration (SQLite, fast paths on or off). */
export interface SuiteResult {
  startupMs: number;
  startups: number[];
  rssIdle: number;
  rssAfter: number;
  rssAfterFlood: number;
  baseline: BaselineResult | undefined;
  http: SuiteHttp;
  signIn: Rates;
  timing: RefusalTiming;
  underHashing: UnderHashing;
}

/** With `baselineServer`, health alternates with it and the baseline's figures come back too. */
export async function benchGatehouse(
  fastPaths: boolean,
  durations: Durations,
  baselineServer?: TimedServer,
): Promise<SuiteResult> {
  const label = `gatehouse fast paths ${fastPaths ? 'on' : 'off'}`;
  const dataDir = makeTemp(fastPaths ? 'on' : 'off');
  const secret = randomSecret();
  const env = (port: number) => benchEnv({ port, dataDir, secret, fastPaths });
  addUser(
    { DATABASE_URL: sqliteUrl(dataDir), DATA_DIR: dataDir },
    { email, password, name: 'Bench' },
  );
  log(`${label}: start-up x${startupRuns}`);
  const server = await startTimed(label, gatehouseArgs, env);

  log(
    `${label}: sign-in ${signInSequential} sequential, ${signInConcurrentTotal} at ${signInConcurrency} concurrent`,
  );
  // The first sign-in also warms up (argon2 is loaded on first use), as it always has.
  await signIn(server.base);
  const signInOps = await signInRates(server.base);
  // The session read uses the newest session: the 200 sign-ins above are past
  // SESSIONS_PER_USER_MAX (100), which ends the oldest sessions, the first one's included.
  const jar = await signIn(server.base);
  log(
    `${label}: refusal timing, ${timingSamples} unknown-email vs ${timingSamples} wrong-password, interleaved`,
  );
  const timing = await refusalTiming(server.base);

  const endpoints = [
    healthEndpoint,
    sessionJarEndpoint(browserCookie(jar)),
    sessionNoneEndpoint,
    csrfEndpoint,
  ];
  const results: Partial<Record<string, WrkResult>> = {};
  let baseline: BaselineResult | undefined;
  for (const endpoint of endpoints) {
    if (endpoint === healthEndpoint && baselineServer !== undefined) {
      const alternated = await alternatingHealth(baselineServer, server, durations, dataDir);
      baseline = alternated.baseline;
      results.health = alternated.health;
    } else {
      results[endpoint.key] = await measure(server, endpoint, durations, dataDir);
    }
  }
  // The "RSS after load" is after the wrk runs; the flood of sign-ins below is
  // reported on its own line so the two are not mixed.
  const rssAfter = rssMb(server.pid);
  log(`${label}: health probed every 5 ms while ${hashingLoad} sign-ins arrive at once`);
  const underHashing = await healthUnderHashing(server.base);
  const rssAfterFlood = rssMb(server.pid);
  await stopChild(server.child);
  return {
    startupMs: server.startupMs,
    startups: server.startups,
    rssIdle: server.rssIdle,
    rssAfter,
    rssAfterFlood,
    baseline,
    http: results as unknown as SuiteHttp,
    signIn: signInOps,
    timing,
    underHashing,
  };
}
