// Fleet throughput for the benchmark: session reads through nginx with wrk, for a fleet of N
// instances, bounded in time. `fleetThroughput` starts the fleet, measures, and stops it.
// Run alone: `node test/fleet/harness/throughput.ts [seconds] [instances…]` (after
// `npm run build`); scripts/bench/fleet.ts runs it in the benchmark.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { startFleet } from './fleet.ts';
import { Client, sessionCookieName } from './http.ts';
import { stopAll, track } from './processes.ts';
import { parseWrk } from '../../../scripts/bench/wrk.ts';

export interface ThroughputOptions {
  instances: number;
  durationSeconds?: number;
  connections?: number;
  threads?: number;
  env?: Record<string, string>;
  log?: (line: string) => void;
}

export interface Throughput {
  instances: number;
  durationSeconds: number;
  connections: number;
  requests: number;
  requestsPerSecond: number;
  latencyMs: { p50: number; p90: number; p99: number };
  non2xx: number;
  socketErrors: number;
}

export const wrkPath = '/usr/bin/wrk';

const email = 'throughput@example.com';
const password = 'throughput password, not on any list';

function runWrk(args: string[]): Promise<string> {
  const child = spawn(wrkPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const entry = track(child, 'wrk');
  return entry.exited.then(({ code }) => {
    if (code !== 0) throw new Error(`wrk exited ${String(code)}: ${entry.output()}`);
    return stdout;
  });
}

/**
 * Session reads (one signed-in cookie) through nginx to a fleet of `instances`, with wrk for
 * `durationSeconds`: `{ instances, requestsPerSecond, latencyMs: { p50, p90, p99 }, requests,
 * non2xx, socketErrors }`. Rejects if the fleet does not start or the cookie does not read.
 * nginx keeps idle upstream connections here (`keepalive`), as the README's block intends.
 */
export async function fleetThroughput({
  instances,
  durationSeconds = 5,
  connections = 32,
  threads = 2,
  env = {},
  log = () => {},
}: ThroughputOptions): Promise<Throughput> {
  if (!fs.existsSync(wrkPath)) throw new Error(`wrk is not installed at ${wrkPath}`);
  const fleet = await startFleet({ instances, env, keepalive: 32, log });
  try {
    await fleet.addUser(email, password);
    const client = new Client(fleet.origin);
    const { outcome } = await client.signIn(email, password);
    if (outcome !== 'signed-in') throw new Error(`sign-in through the fleet: ${outcome}`);
    const read = await client.sessionEmail();
    if (read.email !== email) throw new Error(`the session read as ${String(read.email)}`);
    const cookie = `${sessionCookieName}=${client.cookies.get(sessionCookieName) ?? ''}`;
    const output = await runWrk([
      ...['-t', String(threads), '-c', String(connections), '-d', `${durationSeconds}s`],
      ...['--latency', '-H', `Cookie: ${cookie}`, `${fleet.origin}/api/auth/session`],
    ]);
    const wrk = parseWrk(output);
    return {
      instances,
      durationSeconds,
      connections,
      requests: wrk.requests,
      requestsPerSecond: wrk.rps,
      latencyMs: { p50: wrk.p50, p90: wrk.p90, p99: wrk.p99 },
      non2xx: wrk.non2xx,
      socketErrors: wrk.socketErrors,
    };
  } finally {
    await fleet.stop();
  }
}

/** `fleetThroughput` for each count in turn (1, 2 and 3 by default). */
export async function fleetThroughputSeries({
  counts = [1, 2, 3],
  ...options
}: Omit<ThroughputOptions, 'instances'> & { counts?: number[] } = {}): Promise<Throughput[]> {
  const results: Throughput[] = [];
  for (const instances of counts) results.push(await fleetThroughput({ ...options, instances }));
  return results;
}

if (import.meta.main) {
  const [seconds = '5', ...counts] = process.argv.slice(2);
  const stop = async (code: number) => {
    await stopAll();
    process.exit(code);
  };
  process.on('SIGINT', () => void stop(130));
  process.on('SIGTERM', () => void stop(143));
  try {
    const results = await fleetThroughputSeries({
      durationSeconds: Number(seconds),
      counts: counts.length > 0 ? counts.map(Number) : undefined,
      log: (line) => process.stderr.write(`[fleet] ${line}\n`),
    });
    for (const r of results) {
      process.stdout.write(
        `${r.instances} instance(s): ${r.requestsPerSecond} req/s, p50 ${r.latencyMs.p50} ms, p99 ${r.latencyMs.p99} ms, non-2xx ${r.non2xx}, socket errors ${r.socketErrors}\n`,
      );
    }
    await stop(0);
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    await stop(1);
  }
}
