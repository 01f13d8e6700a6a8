// `npm run bench`: throughput, latency, sign-in cost, start-up and memory of Gatehouse with fast
// paths on and off, against a bare node:http floor. A report, not a test: missed targets print
// FAIL and still exit 0; a benchmark that could not measure (server would not start, 5xx, wrong
// answers) exits 1, because its figures would be meaningless. Env: BENCH_DURATION (default 8s).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startArgs } from './start-command.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const gatehouseMain = path.join(root, 'dist/gatehouse.mjs');
// Started as `npm start` starts it, V8 flags included.
const gatehouseArgs = startArgs(root);
const gatehouseCli = path.join(root, 'dist/gatehouse-cli.cjs');
const baselineMain = path.join(root, 'scripts/bench-baseline.mjs');
const thisScript = fileURLToPath(import.meta.url);

const email = 'bench@example.com';
const password = 'bench-password-correct-horse';
// Same length as the real one, so the two refusal paths hash inputs of the same size.
const wrongPassword = 'bench-password-wrong-horse!!';
const unknownEmail = 'nobody-here@example.com';
// Matches src/users/hasher.ts: the hash-only figure must cost what a sign-in costs.
const argon2Params = { algorithm: 2, memoryCost: 19456, timeCost: 2, parallelism: 1 };

const wrkConnections = 32;
const signInSequential = 40;
const signInConcurrentTotal = 160;
const signInConcurrency = 16;
const timingSamples = 60;
const hashingLoad = 200;
const startupRuns = 5;
// Health is measured in rounds alternating baseline and Gatehouse, median of each: on this VM
// one wrk run of either swings by ±30 % with other tenants' load, which a single pair would
// turn into the ratio.
const healthRounds = 3;
const startupPollMs = 5;
const unrelatedCookies = '_ga=GA1.1.123456789.1700000000; theme=dark; locale=en-GB';

class BenchError extends Error {}

const now = () => performance.now();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (message) => process.stderr.write(`[bench] ${message}\n`);
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

// ---------------------------------------------------------------------------------------------
// The hash-only figure runs in a child pinned to the server's core, so it competes for exactly
// the CPU a sign-in would get; it reports JSON on stdout.
if (process.argv[2] === '--hash-worker') {
  const { hash, verify } = await import('@node-rs/argon2');
  const stored = await hash(password, argon2Params);
  for (let i = 0; i < 3; i += 1) await verify(stored, password);
  const check = async () => {
    if (!(await verify(stored, password))) throw new Error('argon2 verify returned false');
  };
  let t0 = now();
  for (let i = 0; i < signInSequential; i += 1) await check();
  const sequential = signInSequential / ((now() - t0) / 1000);
  t0 = now();
  await pool(signInConcurrentTotal, signInConcurrency, check);
  const concurrent = signInConcurrentTotal / ((now() - t0) / 1000);
  process.stdout.write(JSON.stringify({ sequential, concurrent }));
  process.exit(0);
}

// ---------------------------------------------------------------------------------------------
// A liveness prober in its own process: probes `url` every 5 ms, each on a new connection as
// a platform's probe does, until its standard input closes, then reports the latencies as JSON
// on stdout. Separate from the process that floods the server, so a probe's latency is the
// server's, not the load generator's own event loop handling 200 answers at once.
if (process.argv[2] === '--prober') {
  const url = process.argv[3];
  const latencies = [];
  const statuses = {};
  let running = true;
  process.stdin.on('end', () => (running = false)).resume();
  for (let warm = 0; warm < 20; warm += 1) await probe(url);
  process.stderr.write('ready\n');
  while (running) {
    const t0 = now();
    const status = await probe(url, 10_000);
    latencies.push(now() - t0);
    statuses[status] = (statuses[status] ?? 0) + 1;
    await sleep(5);
  }
  process.stdout.write(JSON.stringify({ latencies, statuses }));
  process.exit(0);
}

async function pool(total, concurrency, task) {
  let next = 0;
  const worker = async () => {
    while (next < total) {
      next += 1;
      await task();
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, worker));
}

// ---------------------------------------------------------------------------------------------
// Process bookkeeping: everything spawned is tracked so an error, Ctrl-C or the watchdog never
// leaves a server holding a port or a CPU.
const children = new Set();
const tempDirs = new Set();

function track(child) {
  children.add(child);
  child.exited = new Promise((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    // A spawn failure (ENOENT, EACCES) may never emit 'exit'; it must still end the wait.
    child.once('error', (error) => resolve({ code: -1, signal: null, error }));
  });
  child.exited.then(() => children.delete(child));
  return child;
}

async function stopChild(child, graceMs = 3000) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const done = await Promise.race([
    child.exited.then(() => true),
    sleep(graceMs).then(() => false),
  ]);
  if (!done) {
    child.kill('SIGKILL');
    await Promise.race([child.exited, sleep(1000)]);
  }
}

async function cleanup() {
  await Promise.all([...children].map((child) => stopChild(child)));
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

process.on('exit', () => {
  // Last resort for paths that skipped the async cleanup (process.exit from elsewhere).
  for (const child of children) child.kill('SIGKILL');
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

let exiting = false;
async function bail(code, message) {
  if (exiting) return;
  exiting = true;
  if (message) process.stderr.write(`\nbench: ${message}\n`);
  await cleanup();
  process.exit(code);
}
process.on('SIGINT', () => bail(130, 'interrupted; stopped everything it started'));
process.on('uncaughtException', (error) => bail(1, error?.stack ?? String(error)));
process.on('unhandledRejection', (error) => bail(1, error?.stack ?? String(error)));
process.on('SIGTERM', () => bail(143, 'terminated; stopped everything it started'));

// ---------------------------------------------------------------------------------------------
function onPath(command) {
  return (process.env.PATH ?? '')
    .split(path.delimiter)
    .some((dir) => dir && fs.existsSync(path.join(dir, command)));
}

function parseDuration(raw) {
  const match = /^(\d+)(s|m)?$/.exec((raw ?? '8s').trim());
  if (!match || Number(match[1]) === 0) {
    throw new BenchError(`BENCH_DURATION must look like 8s, 30 or 1m (got ${JSON.stringify(raw)})`);
  }
  return Number(match[1]) * (match[2] === 'm' ? 60 : 1);
}

function allowedCpus() {
  try {
    const list = /Cpus_allowed_list:\s*(\S+)/.exec(
      fs.readFileSync('/proc/self/status', 'utf8'),
    )?.[1];
    const cpus = [];
    for (const range of list?.split(',') ?? []) {
      const [from, to = from] = range.split('-').map(Number);
      for (let cpu = from; cpu <= to; cpu += 1) cpus.push(cpu);
    }
    return cpus;
  } catch {
    return [];
  }
}

function machineInfo() {
  const nproc = spawnSync('nproc', { encoding: 'utf8' }).stdout?.trim() || String(os.cpus().length);
  let cpu = os.cpus()[0]?.model ?? 'unknown';
  try {
    cpu = /^model name\s*:\s*(.+)$/m.exec(fs.readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? cpu;
  } catch {
    // Not Linux: os.cpus() already gave the best name available.
  }
  return { nproc, cpu, node: process.version };
}

/**
 * CPU ticks spent machine-wide and by this process tree (reaped children land in cutime/cstime),
 * so the report can say how much of the machine other work took: on a shared box that, not
 * Gatehouse, is often what moves the figures.
 */
function cpuTicks() {
  try {
    const cpu = fs
      .readFileSync('/proc/stat', 'utf8')
      .split('\n', 1)[0]
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    const [user, nice, system, , , irq, softirq, steal = 0] = cpu;
    const self = fs.readFileSync('/proc/self/stat', 'utf8');
    // Fields after the parenthesised command name; utime is field 14 overall.
    const fields = self
      .slice(self.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number);
    const own = fields[11] + fields[12] + fields[13] + fields[14];
    return { busy: user + nice + system + irq + softirq, steal, own };
  } catch {
    return undefined;
  }
}

function otherLoad(before, after, wallS) {
  if (!before || !after) return undefined;
  const tick = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;
  const cores = allowedCpus().length || os.cpus().length;
  const otherS = Math.max(0, after.busy - before.busy - (after.own - before.own)) / tick;
  const stealS = (after.steal - before.steal) / tick;
  return { otherS, stealS, pct: (otherS / (wallS * cores)) * 100 };
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** A bare GET that never throws, for start-up polling: undici's pool would add its own latency. */
function probe(url, timeoutMs = 1000) {
  return new Promise((resolve) => {
    const request = http.get(url, { agent: false }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode));
      response.on('error', () => resolve(null));
    });
    request.on('error', () => resolve(null));
    request.setTimeout(timeoutMs, () => request.destroy());
  });
}

function rssMb(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1];
  if (kb === undefined) throw new BenchError(`no VmRSS for pid ${pid}`);
  return Number(kb) / 1024;
}

// ---------------------------------------------------------------------------------------------
const setup = {
  taskset: onPath('taskset'),
  loadCpu: undefined,
  serverCpu: undefined,
};

function pinned(cpu, command, args) {
  return cpu === undefined ? [command, args] : ['taskset', ['-c', String(cpu), command, ...args]];
}

function childEnv(extra) {
  // A clean environment: a stray WORKERS or HASH_CONCURRENCY in the caller's shell must not
  // silently change what is being measured.
  return { PATH: process.env.PATH, HOME: process.env.HOME ?? os.tmpdir(), ...extra };
}

function gatehouseEnv(dataDir, fastPaths, secret, port) {
  return {
    PORT: String(port),
    HOST: '127.0.0.1',
    NODE_ENV: 'production',
    AUTH_URL: `http://127.0.0.1:${port}`,
    AUTH_SECRET: secret,
    DATA_DIR: dataDir,
    DATABASE_URL: `file:${path.join(dataDir, 'gatehouse.db')}`,
    LOG_LEVEL: 'warn',
    FAST_PATHS: fastPaths ? 'on' : 'off',
    WORKERS: '1',
    THROTTLE_EMAIL_MAX_FAILURES: '1000000',
    THROTTLE_IP_MAX_FAILURES: '1000000',
    THROTTLE_EMAIL_MAX_ATTEMPTS: '1000000',
    THROTTLE_IP_MAX_ATTEMPTS: '1000000',
  };
}

/** Spawns `node …nodeArgs` and times spawn → first 200 from /api/health, polling every 5 ms. */
async function startServer(label, nodeArgs, env) {
  const port = Number(env.PORT);
  const base = `http://127.0.0.1:${port}`;
  const [command, args] = pinned(setup.serverCpu, process.execPath, nodeArgs);
  let output = '';
  const t0 = now();
  const child = track(
    spawn(command, args, { cwd: root, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] }),
  );
  const keep = (chunk) => {
    output = (output + chunk.toString()).slice(-4000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let exited = false;
  child.exited.then(() => {
    exited = true;
  });
  const deadline = t0 + 20_000;
  for (;;) {
    const attempt = now();
    if (exited) throw new BenchError(`${label} exited during start-up:\n${output}`);
    if ((await probe(`${base}/api/health`, 500)) === 200) {
      return { label, child, pid: child.pid, base, startupMs: now() - t0, output: () => output };
    }
    if (now() > deadline) {
      await stopChild(child);
      throw new BenchError(`${label} did not answer /api/health within 20 s:\n${output}`);
    }
    await sleep(Math.max(0, startupPollMs - (now() - attempt)));
  }
}

/** Timed starts; the last one stays up for the load runs (fresh port each time). */
async function startTimed(label, nodeArgs, makeEnv) {
  const startups = [];
  for (let run = 1; run <= startupRuns; run += 1) {
    const server = await startServer(label, nodeArgs, makeEnv(await freePort()));
    startups.push(server.startupMs);
    if (run < startupRuns) await stopChild(server.child);
    else {
      // Idle means settled: let start-up garbage and lazy timers run before reading RSS.
      await sleep(1000);
      return { ...server, startupMs: median(startups), startups, rssIdle: rssMb(server.pid) };
    }
  }
}

// ---------------------------------------------------------------------------------------------
function cookiePairs(response) {
  const pairs = new Map();
  for (const line of response.headers.getSetCookie()) {
    const pair = line.split(';', 1)[0];
    const eq = pair.indexOf('=');
    if (eq > 0) pairs.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
  }
  return pairs;
}

const cookieHeader = (pairs) => [...pairs].map(([name, value]) => `${name}=${value}`).join('; ');

async function request(url, init = {}) {
  let response;
  try {
    response = await fetch(url, {
      redirect: 'manual',
      signal: AbortSignal.timeout(30_000),
      ...init,
    });
  } catch (error) {
    throw new BenchError(
      `${init.method ?? 'GET'} ${url} failed: ${error.cause?.message ?? error.message}`,
    );
  }
  const body = await response.text();
  if (response.status >= 500) {
    throw new BenchError(
      `${init.method ?? 'GET'} ${url} answered ${response.status}: ${body.slice(0, 300)}`,
    );
  }
  return { response, body };
}

async function getCsrf(base) {
  const { response, body } = await request(`${base}/api/auth/csrf`);
  const token = response.status === 200 ? JSON.parse(body).csrfToken : undefined;
  if (typeof token !== 'string') throw new BenchError(`csrf answered ${response.status}: ${body}`);
  return { token, cookies: cookiePairs(response) };
}

function postCredentials(base, csrf, login, secret) {
  return request(`${base}/api/auth/callback/credentials`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-auth-return-redirect': '1',
      cookie: cookieHeader(csrf.cookies),
    },
    body: new URLSearchParams({ csrfToken: csrf.token, email: login, password: secret }).toString(),
  });
}

/** One full browser-like sign-in (csrf, then post); returns every cookie the browser would hold. */
async function signIn(base) {
  const csrf = await getCsrf(base);
  const { response, body } = await postCredentials(base, csrf, email, password);
  const jar = new Map([...csrf.cookies, ...cookiePairs(response)]);
  if (response.status !== 200 || body.includes('error=') || !jar.has('authjs.session-token')) {
    throw new BenchError(`sign-in failed: ${response.status} ${body.slice(0, 300)}`);
  }
  return jar;
}

async function signInRates(base) {
  let t0 = now();
  for (let i = 0; i < signInSequential; i += 1) await signIn(base);
  const sequential = signInSequential / ((now() - t0) / 1000);
  t0 = now();
  await pool(signInConcurrentTotal, signInConcurrency, () => signIn(base));
  const concurrent = signInConcurrentTotal / ((now() - t0) / 1000);
  return { sequential, concurrent };
}

/**
 * Liveness while the hasher is saturated: `hashingLoad` sign-ins at once (those past the
 * hasher's capacity are shed with 503 by design) while a separate process probes /api/health
 * every 5 ms on fresh connections.
 */
async function healthUnderHashing(base) {
  const csrf = await getCsrf(base);
  const child = track(
    spawn(process.execPath, [thisScript, '--prober', `${base}/api/health`], {
      cwd: root,
      env: childEnv({}),
      stdio: ['pipe', 'pipe', 'pipe'],
    }),
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  const ready = new Promise((resolve) => {
    child.stderr.on('data', (chunk) => {
      err += chunk;
      if (err.includes('ready\n')) resolve();
    });
  });
  await Promise.race([ready, child.exited]);
  const statuses = {};
  await Promise.all(
    Array.from({ length: hashingLoad }, async () => {
      const response = await fetch(`${base}/api/auth/callback/credentials`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-auth-return-redirect': '1',
          cookie: cookieHeader(csrf.cookies),
        },
        body: new URLSearchParams({ csrfToken: csrf.token, email, password }).toString(),
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
  const probed = JSON.parse(out);
  if (Object.keys(probed.statuses).some((status) => status !== '200')) {
    throw new BenchError(`health answered ${JSON.stringify(probed.statuses)} under load`);
  }
  const unexpected = Object.keys(statuses).filter((status) => status !== '200' && status !== '503');
  if (unexpected.length > 0) {
    throw new BenchError(`sign-ins under load answered ${JSON.stringify(statuses)}`);
  }
  const sorted = probed.latencies.sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { n: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted.at(-1), statuses };
}

/**
 * Unknown email vs known email + wrong password, interleaved in a random order per pair so
 * drift (JIT, GC, thermal) lands on both sides alike. Only the POST is timed.
 */
async function refusalTiming(base) {
  const csrf = await getCsrf(base);
  const samples = { unknown: [], wrong: [] };
  const bodies = { unknown: new Set(), wrong: new Set() };
  const attempt = async (kind, record) => {
    const t0 = now();
    const { response, body } = await postCredentials(
      base,
      csrf,
      kind === 'unknown' ? unknownEmail : email,
      wrongPassword,
    );
    const elapsed = now() - t0;
    if (response.status !== 200 || !body.includes('error=CredentialsSignin')) {
      throw new BenchError(
        `refused sign-in (${kind}) answered ${response.status}: ${body.slice(0, 300)}`,
      );
    }
    if (record) {
      samples[kind].push(elapsed);
      bodies[kind].add(body);
    }
  };
  for (let i = 0; i < 4; i += 1) {
    await attempt('unknown', false);
    await attempt('wrong', false);
  }
  for (let i = 0; i < timingSamples; i += 1) {
    const order = Math.random() < 0.5 ? ['unknown', 'wrong'] : ['wrong', 'unknown'];
    for (const kind of order) await attempt(kind, true);
  }
  const unknown = median(samples.unknown);
  const wrong = median(samples.wrong);
  const sameBody =
    bodies.unknown.size === 1 &&
    bodies.wrong.size === 1 &&
    [...bodies.unknown][0] === [...bodies.wrong][0];
  return { unknown, wrong, diffPct: ((unknown - wrong) / wrong) * 100, sameBody, n: timingSamples };
}

// ---------------------------------------------------------------------------------------------
const unitMs = { us: 0.001, ms: 1, s: 1000, m: 60_000 };

function parseWrk(text) {
  const latency = (pct) => {
    const match = new RegExp(`^\\s*${pct}%\\s+([\\d.]+)(us|ms|s|m)\\s*$`, 'm').exec(text);
    return match ? Number(match[1]) * unitMs[match[2]] : NaN;
  };
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(text)?.[1] ?? NaN),
    p50: latency(50),
    p99: latency(99),
    requests: Number(/(\d+) requests in/.exec(text)?.[1] ?? 0),
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(text)?.[1] ?? 0),
    socketErrors: socket
      ? socket
          .slice(1)
          .map(Number)
          .reduce((a, b) => a + b, 0)
      : 0,
    socketDetail: socket?.[0],
  };
}

function wrkArgs(seconds, url, script) {
  return [
    '-t1',
    `-c${wrkConnections}`,
    `-d${seconds}s`,
    '--latency',
    '--timeout',
    '5s',
    ...(script ? ['-s', script] : []),
    url,
  ];
}

function runWrk(seconds, url, script) {
  const [command, args] = pinned(setup.loadCpu, 'wrk', wrkArgs(seconds, url, script));
  return new Promise((resolve, reject) => {
    const child = track(spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] }));
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (out += chunk));
    // wrk stops itself at -d; this only guards against a hung server holding it open.
    const guard = setTimeout(() => child.kill('SIGKILL'), (seconds + 20) * 1000);
    child.exited.then(({ code }) => {
      clearTimeout(guard);
      if (code !== 0) reject(new BenchError(`wrk exited with ${code}:\n${out}`));
      else resolve(out);
    });
  });
}

/** Endpoint under load: checked once for the right answer, warmed up, then measured. */
async function measure(server, endpoint, durations, tmp) {
  const url = `${server.base}${endpoint.path}`;
  const { response, body } = await request(url, {
    headers: endpoint.cookie ? { cookie: endpoint.cookie } : {},
  });
  if (response.status !== 200 || !endpoint.valid(body)) {
    throw new BenchError(
      `${server.label} ${endpoint.name}: unexpected answer ${response.status} ${body.slice(0, 300)}`,
    );
  }
  let script;
  if (endpoint.cookie) {
    if (!/^[\x20-\x7e]+$/.test(endpoint.cookie))
      throw new BenchError('cookie header is not printable ASCII');
    script = path.join(tmp, `${endpoint.key}.lua`);
    // A JSON string literal is a valid Lua string literal for printable ASCII.
    fs.writeFileSync(script, `wrk.headers["Cookie"] = ${JSON.stringify(endpoint.cookie)}\n`);
  }
  log(
    `${server.label}: ${endpoint.name} (warm-up ${durations.warmup}s, then ${durations.seconds}s)`,
  );
  if (durations.warmup > 0) await runWrk(durations.warmup, url, script);
  const result = parseWrk(await runWrk(durations.seconds, url, script));
  if (
    !Number.isFinite(result.rps) ||
    !Number.isFinite(result.p50) ||
    !Number.isFinite(result.p99)
  ) {
    throw new BenchError(`${server.label} ${endpoint.name}: could not read wrk's output`);
  }
  if (result.non2xx > 0) {
    const after = await request(url, {
      headers: endpoint.cookie ? { cookie: endpoint.cookie } : {},
    });
    throw new BenchError(
      `${server.label} ${endpoint.name}: ${result.non2xx} of ${result.requests} answers were not 2xx/3xx (now answers ${after.response.status})`,
    );
  }
  if (server.child.exitCode !== null || server.child.signalCode !== null) {
    throw new BenchError(
      `${server.label} died during ${endpoint.name} (${server.child.signalCode ?? `exit ${server.child.exitCode}`}):\n${server.output()}`,
    );
  }
  if (result.socketErrors > 0) {
    // A few read errors at wrk's shutdown are normal; refused connections or many errors mean
    // the figures describe a failing server.
    const connect = Number(/connect (\d+)/.exec(result.socketDetail)[1]);
    if (connect > 0 || result.socketErrors > result.requests * 0.01) {
      throw new BenchError(
        `${server.label} ${endpoint.name}: wrk ${result.socketDetail} in ${result.requests} requests`,
      );
    }
    warnings.push(`${server.label} ${endpoint.name}: wrk ${result.socketDetail}`);
  }
  return result;
}

const warnings = [];

const healthEndpoint = {
  key: 'health',
  name: 'health',
  path: '/api/health',
  valid: (body) => JSON.parse(body).status === 'ok',
};

// ---------------------------------------------------------------------------------------------
/** The baseline stays up (idle) until its health rounds alternate with Gatehouse's. */
async function startBaseline() {
  log(`baseline (node:http): start-up x${startupRuns}`);
  return startTimed('baseline', [baselineMain], (port) => ({
    PORT: String(port),
    HOST: '127.0.0.1',
  }));
}

/** The round with the median req/s, so its p50 and p99 come from the same run. */
function medianRound(rounds) {
  const sorted = [...rounds].sort((a, b) => a.rps - b.rps);
  return { ...sorted[(sorted.length - 1) >> 1], rounds: rounds.map((r) => r.rps) };
}

/**
 * Health on the baseline and on Gatehouse in adjacent pairs, which goes first alternating by
 * round, each warmed up in its first round. The ratio is the median of the pairs' ratios: two
 * runs seconds apart share the machine's state far more than two runs minutes apart.
 */
async function alternatingHealth(baselineServer, server, durations, tmp) {
  const base = [];
  const gatehouse = [];
  for (let round = 0; round < healthRounds; round += 1) {
    const these = round === 0 ? durations : { ...durations, warmup: 0 };
    const pair = [
      [baselineServer, base],
      [server, gatehouse],
    ];
    if (round % 2 === 1) pair.reverse();
    for (const [target, results] of pair)
      results.push(await measure(target, healthEndpoint, these, tmp));
  }
  const pairedRatio = median(gatehouse.map((result, i) => result.rps / base[i].rps));
  const rssAfter = rssMb(baselineServer.pid);
  await stopChild(baselineServer.child);
  return {
    baseline: {
      startupMs: baselineServer.startupMs,
      startups: baselineServer.startups,
      rssIdle: baselineServer.rssIdle,
      rssAfter,
      health: medianRound(base),
    },
    health: { ...medianRound(gatehouse), pairedRatio },
  };
}

async function benchHashOnly() {
  log('hash-only: argon2id verify, sequential and 16 concurrent');
  const [command, args] = pinned(setup.serverCpu, process.execPath, [thisScript, '--hash-worker']);
  const child = track(
    spawn(command, args, { cwd: root, env: childEnv({}), stdio: ['ignore', 'pipe', 'pipe'] }),
  );
  let out = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  child.stderr.on('data', (chunk) => (out += chunk));
  const guard = setTimeout(() => child.kill('SIGKILL'), 120_000);
  const { code } = await child.exited;
  clearTimeout(guard);
  if (code !== 0) throw new BenchError(`hash-only worker failed (${code}):\n${out}`);
  return JSON.parse(out);
}

function makeTemp(label) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `gatehouse-bench-${label}-`));
  tempDirs.add(dir);
  return dir;
}

function addUser(dataDir) {
  const result = spawnSync(
    process.execPath,
    [gatehouseCli, 'users', 'add', '--email', email, '--name', 'Bench', '--password-stdin'],
    {
      cwd: root,
      env: childEnv({
        DATABASE_URL: `file:${path.join(dataDir, 'gatehouse.db')}`,
        DATA_DIR: dataDir,
      }),
      input: `${password}\n`,
      encoding: 'utf8',
      timeout: 60_000,
    },
  );
  if (result.status !== 0) {
    throw new BenchError(
      `users add failed (${result.status ?? result.signal}):\n${result.stdout}${result.stderr}`,
    );
  }
}

/** With `baselineServer`, health alternates with it and the baseline's figures come back too. */
async function benchGatehouse(fastPaths, durations, baselineServer) {
  const label = `gatehouse fast paths ${fastPaths ? 'on' : 'off'}`;
  const dataDir = makeTemp(fastPaths ? 'on' : 'off');
  addUser(dataDir);
  const secret = randomBytes(33).toString('base64');
  log(`${label}: start-up x${startupRuns}`);
  const server = await startTimed(label, gatehouseArgs, (port) =>
    gatehouseEnv(dataDir, fastPaths, secret, port),
  );

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

  // What a browser on the app's own origin sends with every session poll.
  const browserCookie = ['authjs.session-token', 'authjs.csrf-token', 'authjs.callback-url']
    .map((name) => {
      if (!jar.has(name)) throw new BenchError(`sign-in did not set the ${name} cookie`);
      return `${name}=${jar.get(name)}`;
    })
    .concat(unrelatedCookies)
    .join('; ');
  const endpoints = [
    healthEndpoint,
    {
      key: 'sessionJar',
      name: 'session (cookie jar)',
      path: '/api/auth/session',
      cookie: browserCookie,
      valid: (body) => JSON.parse(body)?.user?.email === email,
    },
    {
      key: 'sessionNone',
      name: 'session (no cookie)',
      path: '/api/auth/session',
      valid: (body) => JSON.parse(body) === null,
    },
    {
      key: 'csrf',
      name: 'csrf',
      path: '/api/auth/csrf',
      valid: (body) => typeof JSON.parse(body).csrfToken === 'string',
    },
  ];
  const results = {};
  let baseline;
  for (const endpoint of endpoints) {
    if (endpoint === healthEndpoint && baselineServer !== undefined) {
      const alternated = await alternatingHealth(baselineServer, server, durations, dataDir);
      baseline = alternated.baseline;
      results.health = alternated.health;
    } else {
      results[endpoint.key] = await measure(server, endpoint, durations, dataDir);
    }
  }
  // The issue's "RSS after load" is after the wrk runs; the flood of sign-ins below is
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
    http: results,
    signIn: signInOps,
    timing,
    underHashing,
  };
}

// ---------------------------------------------------------------------------------------------
const fmt = {
  rps: (v) => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : '—'),
  ms: (v) => (Number.isFinite(v) ? v.toFixed(v < 10 ? 2 : 1) : '—'),
  ops: (v) => (Number.isFinite(v) ? v.toFixed(1) : '—'),
  int: (v) => (Number.isFinite(v) ? String(Math.round(v)) : '—'),
  mb: (v) => (Number.isFinite(v) ? v.toFixed(1) : '—'),
  ratio: (a, b) =>
    Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `${(a / b).toFixed(2)}×` : '—',
};

function report({ machine, durations, baseline, hashOnly, on, off, elapsedS, load }) {
  const rows = [];
  const row = (name, format, b, o, f, { base = b, mark = '', ratio } = {}) => {
    const onBase = ratio === undefined ? fmt.ratio(o, base) : `${ratio.toFixed(2)}×`;
    rows.push(
      `| ${name} | ${format(b)} | ${format(o)} | ${format(f)} | ${onBase}${onBase === '—' ? '' : mark} | ${fmt.ratio(o, f)} |`,
    );
  };
  const bh = baseline.health;
  for (const [key, name] of [
    ['health', 'health'],
    ['sessionJar', 'session (cookie jar)'],
    ['sessionNone', 'session (no cookie)'],
    ['csrf', 'csrf'],
  ]) {
    const b = key === 'health' ? bh : undefined;
    const mark = key === 'health' ? '' : ' †';
    for (const [stat, label, format] of [
      ['rps', 'req/s', fmt.rps],
      ['p50', 'p50 ms', fmt.ms],
      ['p99', 'p99 ms', fmt.ms],
    ]) {
      const paired = key === 'health' && stat === 'rps';
      row(`${name} ${label}`, format, b?.[stat], on.http[key][stat], off.http[key][stat], {
        base: bh[stat],
        mark: paired ? ' §' : mark,
        ratio: paired ? on.http.health.pairedRatio : undefined,
      });
    }
  }
  const vsHash = (base) => ({ base, mark: ' ‡' });
  row(
    'sign-in sequential ops/s',
    fmt.ops,
    undefined,
    on.signIn.sequential,
    off.signIn.sequential,
    vsHash(hashOnly.sequential),
  );
  row(
    `sign-in ${signInConcurrency} concurrent ops/s`,
    fmt.ops,
    undefined,
    on.signIn.concurrent,
    off.signIn.concurrent,
    vsHash(hashOnly.concurrent),
  );
  rows.push(
    `| hash-only argon2id verify ops/s, sequential | ${fmt.ops(hashOnly.sequential)} | — | — | — | — |`,
  );
  rows.push(
    `| hash-only argon2id verify ops/s, ${signInConcurrency} concurrent | ${fmt.ops(hashOnly.concurrent)} | — | — | — | — |`,
  );
  row(
    `start-up ms (median of ${startupRuns})`,
    fmt.int,
    baseline.startupMs,
    on.startupMs,
    off.startupMs,
  );
  row('RSS idle MB', fmt.mb, baseline.rssIdle, on.rssIdle, off.rssIdle);
  row('RSS after load MB', fmt.mb, baseline.rssAfter, on.rssAfter, off.rssAfter);

  const table = [
    '| metric | baseline (node:http) | Gatehouse fast paths on | Gatehouse fast paths off | ratio on/baseline | ratio on/off |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
    ...rows,
  ].join('\n');

  const check = (ok, text) => `${ok ? 'PASS' : 'FAIL'} ${text}`;
  const sj = on.http.sessionJar.rps;
  const checks = [
    check(
      sj >= 8 * off.http.sessionJar.rps,
      `session (cookie jar) on ≥ 8× off: ${fmt.ratio(sj, off.http.sessionJar.rps)}`,
    ),
    check(
      sj >= 0.15 * bh.rps,
      `session (cookie jar) on ≥ 0.15× baseline health: ${fmt.ratio(sj, bh.rps)}`,
    ),
    check(
      on.http.health.pairedRatio >= 0.9,
      `health on ≥ 0.9× baseline: ${on.http.health.pairedRatio.toFixed(2)}× (median of ${healthRounds} paired rounds)`,
    ),
    check(
      on.http.csrf.rps >= 1.5 * off.http.csrf.rps,
      `csrf on ≥ 1.5× off: ${fmt.ratio(on.http.csrf.rps, off.http.csrf.rps)}`,
    ),
    check(
      on.http.sessionNone.rps >= 1.5 * off.http.sessionNone.rps,
      `session (no cookie) on ≥ 1.5× off: ${fmt.ratio(on.http.sessionNone.rps, off.http.sessionNone.rps)}`,
    ),
    check(on.startupMs <= 300, `start-up (fast paths on) ≤ 300 ms: ${fmt.int(on.startupMs)} ms`),
    check(on.rssIdle <= 70, `RSS idle (fast paths on) ≤ 70 MB: ${fmt.mb(on.rssIdle)} MB`),
    check(on.rssAfter <= 120, `RSS after load (fast paths on) ≤ 120 MB: ${fmt.mb(on.rssAfter)} MB`),
    check(
      on.underHashing.p99 < 100,
      `health p99 while ${hashingLoad} sign-ins hash (fast paths on) < 100 ms: ${fmt.ms(on.underHashing.p99)} ms`,
    ),
    check(
      Math.abs(on.timing.diffPct) <= 5,
      `refusal timing (fast paths on) within 5 %: unknown email ${fmt.ms(on.timing.unknown)} ms vs wrong password ${fmt.ms(on.timing.wrong)} ms median (${signed(on.timing.diffPct)} %)`,
    ),
  ];

  const pin =
    setup.serverCpu === undefined
      ? 'not pinned (taskset missing or fewer than 2 CPUs allowed): figures include client/server contention'
      : `servers and the hash-only run pinned with \`taskset -c ${setup.serverCpu}\`; wrk and the sign-in client on CPU ${setup.loadCpu}`;
  const list = (items) => items.map((item) => `- ${item}`).join('\n');
  const notes = [
    `† No Gatehouse route other than health exists on the baseline: session and csrf rows are compared with baseline health.`,
    `‡ Sign-in rows: ratio of Gatehouse (fast paths on) to hash-only argon2id verify at the same concurrency; near 1× means sign-in is bound by the hash.`,
    `Sign-in: each op is \`GET /api/auth/csrf\` + \`POST /api/auth/callback/credentials\` (\`X-Auth-Return-Redirect: 1\`); throttling raised to 1000000 (\`THROTTLE_{EMAIL,IP}_MAX_{FAILURES,ATTEMPTS}\`) so it does not interfere. Hash-only: \`@node-rs/argon2\` verify, m=19456, t=2, p=1, pinned like the servers.`,
    `Where sign-in time goes (fast paths on): ${fmt.ms(1000 / on.signIn.sequential)} ms per sequential sign-in (csrf + post) vs ${fmt.ms(1000 / hashOnly.sequential)} ms per bare verify; a refused POST alone takes ${fmt.ms((on.timing.unknown + on.timing.wrong) / 2)} ms (median).`,
    `Health under hashing load (fast paths on): ${on.underHashing.n} probes (a separate process, every 5 ms, a new connection each) while ${hashingLoad} sign-ins arrived at once (answers ${JSON.stringify(on.underHashing.statuses)}; 503 is the hash queue shedding load): p50 ${fmt.ms(on.underHashing.p50)} ms, p99 ${fmt.ms(on.underHashing.p99)} ms, max ${fmt.ms(on.underHashing.max)} ms; RSS after it ${fmt.mb(on.rssAfterFlood)} MB. Fast paths off: p99 ${fmt.ms(off.underHashing.p99)} ms, RSS after ${fmt.mb(off.rssAfterFlood)} MB.`,
    `Refusal timing: ${on.timing.n} + ${on.timing.n} interleaved POSTs (random order per pair), one CSRF pair reused, only the POST timed. Fast paths on: unknown email ${fmt.ms(on.timing.unknown)} ms vs wrong password ${fmt.ms(on.timing.wrong)} ms (${signed(on.timing.diffPct)} %), same response body: ${on.timing.sameBody ? 'yes' : 'NO'}. Fast paths off: ${fmt.ms(off.timing.unknown)} vs ${fmt.ms(off.timing.wrong)} ms (${signed(off.timing.diffPct)} %), same body: ${off.timing.sameBody ? 'yes' : 'NO'}.`,
    `§ Health: ${healthRounds} rounds, each a baseline run and a Gatehouse (fast paths on) run back to back, which goes first alternating; the table shows each side's median round, and the ratio is the median of the per-round ratios. req/s per round: baseline ${baseline.health.rounds.map(fmt.rps).join(' / ')}, on ${on.http.health.rounds.map(fmt.rps).join(' / ')}.`,
    `Start-up: spawn → first 200 from \`/api/health\`, polled every ${startupPollMs} ms; runs (ms): baseline ${fmtRuns(baseline)}, on ${fmtRuns(on)}, off ${fmtRuns(off)}. RSS: VmRSS from \`/proc/<pid>/status\`; "idle" 1 s after start-up, "after load" after the sign-ins and all wrk runs.`,
    `Session cookie jar: \`authjs.session-token\` + \`authjs.csrf-token\` + \`authjs.callback-url\` + \`${unrelatedCookies}\`, one Cookie header.`,
  ];
  const run = [
    `Machine: nproc ${machine.nproc}, ${machine.cpu}, Node ${machine.node}; ${pin}.`,
    `Gatehouse started as \`npm start\` starts it: \`node ${[...gatehouseArgs.slice(0, -1), path.relative(root, gatehouseArgs.at(-1))].join(' ')}\`${process.env.NODE_EXTRA_CA_CERTS ? '; NODE_EXTRA_CA_CERTS is set, which costs every node process here about 70 ms of start-up (the baseline too)' : ''}.`,
    load
      ? `Other load during the run: ${load.otherS.toFixed(1)} CPU-s by processes outside this benchmark (${load.pct.toFixed(1)} % of the machine), steal ${load.stealS.toFixed(1)} s.`
      : 'Other load during the run: unknown (no /proc/stat).',
    `wrk: \`${wrkLine(durations.seconds)}\` per endpoint (the cookie-jar run adds \`-s cookie-jar.lua\`, which sets the Cookie header), each after a ${durations.warmup} s warm-up at the same settings. Total run ${elapsedS.toFixed(0)} s.`,
    ...warnings.map((w) => `Warning: ${w}`),
  ];
  return [table, list(notes), list(run), `Targets:\n\n${list(checks)}`].join('\n\n') + '\n';
}

const signed = (value) => `${value >= 0 ? '+' : ''}${value.toFixed(1)}`;

/** The owner's prettier settings, when installed, so the results file passes `format:check`. */
async function prettyMarkdown(text, file) {
  try {
    const prettier = await import('prettier');
    const options = (await prettier.resolveConfig(file)) ?? {};
    return await prettier.format(text, { ...options, filepath: file, parser: 'markdown' });
  } catch {
    return text;
  }
}

function wrkLine(seconds) {
  const prefix = setup.loadCpu === undefined ? [] : ['taskset', '-c', String(setup.loadCpu)];
  return [...prefix, 'wrk', ...wrkArgs(seconds, 'http://127.0.0.1:<port>/api/...')].join(' ');
}

function fmtRuns(result) {
  return result.startups.map((ms) => Math.round(ms)).join('/');
}

// ---------------------------------------------------------------------------------------------
async function main() {
  const started = now();
  const ticksBefore = cpuTicks();
  if (!onPath('wrk')) {
    process.stderr.write(
      'bench: wrk is not installed. Install it with `apt-get install wrk` (Debian/Ubuntu) or `brew install wrk` (macOS), then run `npm run bench` again.\n',
    );
    process.exit(2);
  }
  for (const file of [gatehouseMain, gatehouseCli]) {
    if (!fs.existsSync(file))
      throw new BenchError(
        `${path.relative(root, file)} is missing: run \`npm run build\` (npm run bench does)`,
      );
  }
  const seconds = parseDuration(process.env.BENCH_DURATION);
  const durations = { seconds, warmup: seconds >= 4 ? 2 : 1 };
  const machine = machineInfo();

  const cpus = allowedCpus();
  if (setup.taskset && cpus.length >= 2) {
    setup.loadCpu = cpus[0];
    setup.serverCpu = cpus[1];
    try {
      // The sign-in client runs in this process: keep it off the server's core too.
      execFileSync('taskset', ['-a', '-cp', String(setup.loadCpu), String(process.pid)], {
        stdio: 'ignore',
      });
    } catch {
      warnings.push(
        'could not pin the bench process itself; the sign-in client may share the server core',
      );
    }
  }

  // Worst case per phase, so a hung step cannot keep the machine busy indefinitely.
  // Thirteen wrk measurements in all (health alternates three rounds on two servers).
  const budgetS = 14 * (seconds + durations.warmup + 25) + 240;
  const watchdog = setTimeout(
    () => bail(1, `watchdog: the benchmark ran longer than ${budgetS} s`),
    budgetS * 1000,
  );

  const baselineServer = await startBaseline();
  const hashOnly = await benchHashOnly();
  const on = await benchGatehouse(true, durations, baselineServer);
  const { baseline } = on;
  const off = await benchGatehouse(false, durations);
  clearTimeout(watchdog);
  await cleanup();

  const elapsedS = (now() - started) / 1000;
  const load = otherLoad(ticksBefore, cpuTicks(), elapsedS);
  if (load && load.pct > 5) {
    warnings.push(
      `other processes used ${load.pct.toFixed(0)} % of the machine during the run: figures are noisy, rerun on a quiet machine before comparing`,
    );
  }
  const resultsFile = path.resolve(process.cwd(), 'bench-results.md');
  const text = await prettyMarkdown(
    report({ machine, durations, baseline, hashOnly, on, off, elapsedS, load }),
    resultsFile,
  );
  process.stdout.write(`\n${text}`);
  fs.writeFileSync(
    resultsFile,
    await prettyMarkdown(`# Gatehouse benchmark\n\n${text}`, resultsFile),
  );
  log(`written to ${resultsFile}`);
}

main().then(
  () => process.exit(0),
  (error) => bail(1, error instanceof BenchError ? error.message : (error?.stack ?? String(error))),
);
