// `npm run bench:hash-priority`: what HASH_NICE trades. For each value (HASH_NICE_VALUES,
// default 0,5,10,15,19) and each of PRIORITY_RUNS fresh servers (2), Gatehouse runs on one
// pinned core (taskset) with the client and wrk on the other, and two things are measured:
//   - health probed every 5 ms while 200 sign-ins arrive at once (the bench's own measurement,
//     health-under-hashing.ts): p50, p99, max;
//   - sign-ins one after another for 9 s while wrk floods session reads at 64 connections,
//     saturating the server's core: how long each takes.
// A higher nice keeps probes and reads quick under hashing and slows sign-ins under a read
// flood. Loopback only, bounded in time, stops what it started. Needs taskset and wrk.
import { execFileSync, spawn } from 'node:child_process';
import { email, now, password } from './common.ts';
import { addUser, benchEnv, gatehouseArgs, randomSecret, sqliteUrl } from './gatehouse.ts';
import { healthUnderHashing } from './health-under-hashing.ts';
import { signIn } from './http.ts';
import { allowedCpus, onPath } from './machine.ts';
import {
  cleanup,
  freePort,
  installCleanupHandlers,
  makeTemp,
  setup,
  startServer,
  stopChild,
  track,
} from './processes.ts';

const values = (process.env.HASH_NICE_VALUES ?? '0,5,10,15,19').split(',').map(Number);
const runs = Number(process.env.PRIORITY_RUNS ?? 2);
const floodSeconds = 9;

const cpus = allowedCpus();
if (!onPath('taskset') || !onPath('wrk') || cpus.length < 2) {
  process.stderr.write('bench:hash-priority needs taskset, wrk and two CPUs\n');
  process.exit(2);
}
installCleanupHandlers();
setup.loadCpu = cpus[0];
setup.serverCpu = cpus[1];
execFileSync('taskset', ['-a', '-cp', String(setup.loadCpu), String(process.pid)], {
  stdio: 'ignore',
});

const percentile = (values: number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};
const ms = (value: number): string => value.toFixed(0);

/** Sign-ins one at a time while wrk saturates the server's core with session reads. */
async function signInsUnderReadFlood(base: string): Promise<number[]> {
  const wrk = track(
    spawn(
      'taskset',
      [
        '-c',
        String(setup.loadCpu),
        'wrk',
        '-t1',
        '-c64',
        `-d${floodSeconds + 3}s`,
        `${base}/api/auth/session`,
      ],
      { stdio: 'ignore' },
    ),
  );
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const latencies: number[] = [];
  const until = now() + floodSeconds * 1000;
  while (now() < until) {
    const t0 = now();
    await signIn(base);
    latencies.push(now() - t0);
  }
  await wrk.exited;
  return latencies;
}

/** One server's figures (ms) at one HASH_NICE. */
interface Row {
  nice: number;
  healthP50: number;
  healthP99: number;
  healthMax: number;
  signInsDuringFlood: number;
  signInP50: number;
  signInP99: number;
}

const rows: Row[] = [];
for (const nice of values) {
  for (let run = 0; run < runs; run += 1) {
    const dataDir = makeTemp(`nice-${nice}`);
    addUser(
      { DATABASE_URL: sqliteUrl(dataDir), DATA_DIR: dataDir },
      { email, password, name: 'Bench' },
    );
    const port = await freePort();
    const env = benchEnv({
      port,
      dataDir,
      secret: randomSecret(),
      fastPaths: true,
      HASH_NICE: String(nice),
    });
    const server = await startServer(`nice ${nice}`, gatehouseArgs, env);
    await signIn(server.base); // loads argon2 and starts the hashing threads
    const burst = await healthUnderHashing(server.base);
    const flood = await signInsUnderReadFlood(server.base);
    await stopChild(server.child);
    const row = {
      nice,
      healthP50: burst.p50,
      healthP99: burst.p99,
      healthMax: burst.max,
      signInsDuringFlood: flood.length,
      signInP50: percentile(flood, 0.5),
      signInP99: percentile(flood, 0.99),
    };
    rows.push(row);
    process.stderr.write(
      `[hash-priority] HASH_NICE=${nice} run ${run + 1}: health p50 ${ms(row.healthP50)} p99 ${ms(row.healthP99)} max ${ms(row.healthMax)} ms during 200 sign-ins at once; ${row.signInsDuringFlood} sign-ins in ${floodSeconds} s of read flood, p50 ${ms(row.signInP50)} p99 ${ms(row.signInP99)} ms\n`,
    );
  }
}

const range = (list: Row[], key: 'healthP99' | 'healthMax' | 'signInP50'): string => {
  const picked = list.map((row) => row[key]);
  return `${ms(Math.min(...picked))}-${ms(Math.max(...picked))}`;
};
process.stdout.write(
  '| HASH_NICE | health p99 ms, 200 sign-ins at once | health max ms | sign-in p50 ms under a read flood |\n|---|---|---|---|\n',
);
for (const nice of values) {
  const mine = rows.filter((row) => row.nice === nice);
  process.stdout.write(
    `| ${nice} | ${range(mine, 'healthP99')} | ${range(mine, 'healthMax')} | ${range(mine, 'signInP50')} |\n`,
  );
}
await cleanup();
process.exit(0);
