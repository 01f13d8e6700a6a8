// Liveness while the hasher is saturated: 200 sign-ins at once while a separate process probes
// /api/health every 5 ms on fresh connections, as a platform's probe does.
import { spawn } from 'node:child_process';
import { BenchError, benchMain, email, now, password, root, sleep } from './common.ts';
import { credentialsInit, getCsrf, probe } from './http.ts';
import { childEnv, track } from './processes.ts';

export const hashingLoad = 200;

/**
 * The prober's side (`main.ts --prober <url>`): probes `url` every 5 ms, each on a new
 * connection, until its standard input closes, then reports the latencies as JSON on stdout.
 * Separate from the process that floods the server, so a probe's latency is the server's, not
 * the load generator's own event loop handling 200 answers at once.
 */
export async function proberWorker(url: string): Promise<never> {
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let running = true;
  process.stdin.on('end', () => (running = false)).resume();
  for (let warm = 0; warm < 20; warm += 1) await probe(url);
  process.stderr.write('ready\n');
  while (running) {
    const t0 = now();
    const status = await probe(url, 10_000);
    latencies.push(now() - t0);
    statuses[String(status)] = (statuses[String(status)] ?? 0) + 1;
    await sleep(5);
  }
  process.stdout.write(JSON.stringify({ latencies, statuses }));
  process.exit(0);
}

/**
 * `hashingLoad` sign-ins at once (those past the hasher's capacity are shed with 503 by
 * design) while the prober runs; returns the probes' latency percentiles.
 */
/** Probe latencies (ms) while the sign-ins hash, and how the sign-ins were answered. */
export interface UnderHashing {
  n: number;
  p50: number;
  p99: number;
  max: number;
  statuses: Record<string, number>;
}

export async function healthUnderHashing(base: string): Promise<UnderHashing> {
  const csrf = await getCsrf(base);
  const child = track(
    spawn(process.execPath, [benchMain, '--prober', `${base}/api/health`], {
      cwd: root,
      env: childEnv({}),
      stdio: ['pipe', 'pipe', 'pipe'],
    }),
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const ready = new Promise<void>((resolve) => {
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString();
      if (err.includes('ready\n')) resolve();
    });
  });
  await Promise.race([ready, child.exited]);
  const statuses: Record<string, number> = {};
  await Promise.all(
    Array.from({ length: hashingLoad }, async () => {
      const response = await fetch(`${base}/api/auth/callback/credentials`, {
        ...credentialsInit(csrf, email, password),
        signal: AbortSignal.timeout(60_000),
      });
      await response.text();
      statuses[response.status] = (statuses[response.status] ?? 0) + 1;
    }),
  ).finally(() => child.stdin.end());
  const guard = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const { code } = await child.exited;
  clearTimeout(guard);
  if (code !== 0) throw new BenchError(`health prober failed (${code}):\n${err}${out}`);
  const probed = JSON.parse(out) as { latencies: number[]; statuses: Record<string, number> };
  if (Object.keys(probed.statuses).some((status) => status !== '200')) {
    throw new BenchError(`health answered ${JSON.stringify(probed.statuses)} under load`);
  }
  const unexpected = Object.keys(statuses).filter((status) => status !== '200' && status !== '503');
  if (unexpected.length > 0) {
    throw new BenchError(`sign-ins under load answered ${JSON.stringify(statuses)}`);
  }
  const sorted = probed.latencies.sort((a, b) => a - b);
  const at = (q: number): number =>
    sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return {
    n: sorted.length,
    p50: at(0.5),
    p99: at(0.99),
    max: sorted[sorted.length - 1],
    statuses,
  };
}
