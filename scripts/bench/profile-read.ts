// `npm run bench:profile-read`: where a session read's CPU goes. A profiling aid, not a
// benchmark: Gatehouse as `npm start` runs it (production, default log level, output to a file),
// signed in with a browser's jar, read by `wrk -t1 -c32` for PROFILE_SECONDS (8), then stopped.
// It prints the server's CPU per read thread by thread (from /proc/<pid>/task/*/stat), and with
// PROFILE=cpu writes a V8 profile (read it with profile-top.ts), with PROFILE=perf a `perf
// record -g` of the process (`--perf-basic-prof` names the JavaScript frames), with
// PROFILE=strace a count of its system calls. PROFILE_SEMI_SPACE=N replaces npm start's
// --max-semi-space-size. Loopback only; stops its server on every exit path.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { gatehouseArgs, log } from './common.ts';
import { addUser, benchEnv, randomSecret, sqliteUrl } from './gatehouse.ts';
import { signIn } from './http.ts';
import { freePort, installCleanupHandlers, makeTemp, startServer, stopChild } from './processes.ts';
import { browserCookie } from './session-read.ts';

const mode = process.env.PROFILE ?? 'threads';
if (!['threads', 'cpu', 'perf', 'strace'].includes(mode)) {
  process.stderr.write(`PROFILE must be cpu, perf or strace (or unset), not ${mode}\n`);
  process.exit(2);
}
const seconds = Number(process.env.PROFILE_SECONDS ?? 8);
const semiSpace = process.env.PROFILE_SEMI_SPACE;

installCleanupHandlers();
const dir = makeTemp('profile-read');
const dataDir = path.join(dir, 'data');
fs.mkdirSync(dataDir);
addUser(
  { DATABASE_URL: sqliteUrl(dataDir), DATA_DIR: dataDir },
  { email: 'bench@example.com', password: 'bench-password-correct-horse', name: 'Bench' },
);
const env = benchEnv({ port: await freePort(), dataDir, secret: randomSecret(), fastPaths: true });
// The default log level, as `npm start` runs: benchEnv's warn is the flattering case.
delete env.LOG_LEVEL;

const flags = gatehouseArgs
  .slice(0, -1)
  .map((arg) =>
    semiSpace !== undefined && arg.startsWith('--max-semi-space-size')
      ? `--max-semi-space-size=${semiSpace}`
      : arg,
  );
const profileDir = path.join(dir, 'profile');
if (mode === 'cpu') flags.push('--cpu-prof', `--cpu-prof-dir=${profileDir}`);
if (mode === 'perf') flags.push('--perf-basic-prof');
const output = fs.openSync(path.join(dir, 'server.log'), 'a');
const server = await startServer('gatehouse', [...flags, ...gatehouseArgs.slice(-1)], env, {
  stdio: ['ignore', output, output],
});
fs.closeSync(output);
const pid = server.child.pid as number;
const jarScript = path.join(dir, 'jar.lua');
fs.writeFileSync(
  jarScript,
  `wrk.headers["Cookie"] = ${JSON.stringify(browserCookie(await signIn(server.base)))}\n`,
);

/** CPU ticks (user + system, 1/100 s) of each thread of the server, by id and name. */
function threadTicks(): Map<string, number> {
  const ticks = new Map<string, number>();
  const tasks = `/proc/${pid}/task`;
  for (const tid of fs.readdirSync(tasks)) {
    try {
      const stat = fs.readFileSync(`${tasks}/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks.set(`${tid} ${name}`, Number(fields[11]) + Number(fields[12]));
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return ticks;
}

let recorder: ChildProcess | undefined;
if (mode === 'perf') {
  recorder = spawn('perf', ['record', '-g', '-o', path.join(dir, 'perf.data'), '-p', `${pid}`], {
    stdio: 'ignore',
  });
}
if (mode === 'strace') {
  recorder = spawn('strace', ['-f', '-c', '-o', path.join(dir, 'strace.txt'), '-p', `${pid}`]);
}
await new Promise((resolve) => setTimeout(resolve, 500));
const before = threadTicks();
const wrk = spawnSync(
  'taskset',
  [
    '-c',
    '0',
    'wrk',
    '-t1',
    '-c32',
    `-d${seconds}s`,
    '-s',
    jarScript,
    `${server.base}/api/auth/session`,
  ],
  { encoding: 'utf8' },
);
const after = threadTicks();
recorder?.kill('SIGINT');
await new Promise((resolve) => setTimeout(resolve, 1500));
log(wrk.stdout);
const reads = Number(/(\d+) requests in/.exec(wrk.stdout)?.[1] ?? Number.NaN);
let total = 0;
for (const [thread, ticks] of after) {
  const spent = ticks - (before.get(thread) ?? 0);
  total += spent;
  if (spent > 0) log(`${thread}: ${((spent * 10_000) / reads).toFixed(1)} µs CPU per read`);
}
log(`every thread: ${((total * 10_000) / reads).toFixed(1)} µs CPU per read`);
await stopChild(server.child);

const kept = process.env.PROFILE_OUT ?? '/tmp';
if (mode === 'cpu') {
  const file = fs.readdirSync(profileDir).find((name) => name.endsWith('.cpuprofile'));
  if (file !== undefined) {
    fs.copyFileSync(path.join(profileDir, file), path.join(kept, 'session-read.cpuprofile'));
    log(`V8 profile: ${path.join(kept, 'session-read.cpuprofile')} (profile-top.ts reads it)`);
  }
}
if (mode === 'perf') {
  fs.copyFileSync(path.join(dir, 'perf.data'), path.join(kept, 'session-read.perf'));
  log(
    `perf: perf report -i ${path.join(kept, 'session-read.perf')} (JIT names: /tmp/perf-${pid}.map)`,
  );
}
if (mode === 'strace') process.stdout.write(fs.readFileSync(path.join(dir, 'strace.txt'), 'utf8'));
process.exit(0);
