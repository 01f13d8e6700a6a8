// `npm run soak`: steady mixed traffic for minutes, memory and latency watched; bounded.
// Gatehouse (production build, SQLite, a user made
// for the run, started as `npm start` starts it) gets a steady mix of sign-ins (right and wrong
// passwords, random emails, each from its own loopback address 127.x.y.z), session reads over
// many live sessions, and health probes, at SOAK_RPS requests per second for SOAK_MINUTES, each
// request on a new connection.
// Every 10 s it samples RSS, open file descriptors and answers; at the end it prints the samples
// and judges: no 5xx, no file-descriptor growth, and no RSS growth trend once the session pool
// is full (before that, bounded caches filling up is growth by design).
// Loopback only; it stops everything it started. A report: a missed check prints FAIL and the
// exit code is 1, so it can gate a release; a soak that could not run exits 2.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { addUser, gatehouseArgs, gatehouseEnv } from './gatehouse.ts';
import { freePort, startServer } from './processes.ts';

const minutes = Number(process.env.SOAK_MINUTES ?? 15);
const rps = Number(process.env.SOAK_RPS ?? 50);
if (!(minutes > 0 && minutes <= 24 * 60) || !(rps > 0 && rps <= 2000)) {
  process.stderr.write('soak: SOAK_MINUTES must be in (0, 1440] and SOAK_RPS in (0, 2000]\n');
  process.exit(2);
}
const sampleEveryMs = 10_000;
const email = 'soak@example.com';
const password = 'soak-password-correct-horse';
// Live sessions the reads rotate over: more than the read path's caches hold (2,048), so their
// eviction is part of what the RSS trend judges. At the default rate the pool is full after
// about 8 minutes (5 successful sign-ins a second).
const sessionsKept = 2500;
// Per second: 2 sign-ins in 10 requests (half right, half wrong), 6 session reads, 2 probes.
const mix = ['signin-ok', 'signin-wrong', 'session', 'session', 'session', 'session'];
mix.push('session', 'session', 'health', 'health');

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const log = (message: string): boolean => process.stderr.write(`[soak] ${message}\n`);
// Linux routes all of 127.0.0.0/8 to the loopback interface: each address is a distinct client.
const randomLoopback = (): string =>
  `127.${[0, 0, 0].map(() => Math.floor(Math.random() * 250) + 1).join('.')}`;

/** One request on its own connection from `localAddress`; never throws for an HTTP status. */
function request(
  url: string,
  {
    method = 'GET',
    headers = {},
    body,
    localAddress = '127.0.0.1',
  }: {
    method?: string;
    headers?: http.OutgoingHttpHeaders;
    body?: string;
    localAddress?: string;
  } = {},
): Promise<{ status: number | undefined; text: string; cookies: string[] }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, localAddress, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        const setCookie = res.headers['set-cookie'] ?? [];
        resolve({ status: res.statusCode, text, cookies: setCookie.map((c) => c.split(';')[0]) });
      });
      res.on('error', reject);
    });
    req.setTimeout(15_000, () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

/** One sample of the server's resources. */
interface ProcStats {
  rssMb: number;
  fds: number;
}

/** A sample taken every 10 s: when, the server's resources, and how the requests fared. */
interface Sample extends ProcStats {
  minute: number;
  p99: number;
  sent: number;
  poolFull: boolean;
}

function procStats(pid: number): ProcStats {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const rssKb = Number(/VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1]);
  return { rssMb: rssKb / 1024, fds: fs.readdirSync(`/proc/${pid}/fd`).length };
}

/** Least-squares slope of y over x. */
function slope(points: { x: number; y: number }[]): number {
  const n = points.length;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const sxy = points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0);
  const sxx = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  return sxx === 0 ? 0 : sxy / sxx;
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-soak-'));
let server: ChildProcess | undefined;
async function cleanup(): Promise<void> {
  if (server && server.exitCode === null) {
    const running = server;
    running.kill('SIGTERM');
    await Promise.race([new Promise((r) => running.once('exit', r)), sleep(5000)]);
    if (server.exitCode === null) server.kill('SIGKILL');
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
}
process.on('SIGINT', () => void cleanup().then(() => process.exit(130)));

/** What the soak saw: the samples, every answer by kind and status, the first failures. */
interface Soak {
  samples: Sample[];
  statuses: Record<string, number>;
  fail: string[];
  sent: number;
}

async function main(): Promise<Soak> {
  if (!fs.existsSync(gatehouseArgs[gatehouseArgs.length - 1])) {
    throw new Error('dist/gatehouse.mjs is missing: run `npm run build` (npm run soak does)');
  }
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = gatehouseEnv({
    port,
    dataDir,
    // The soak signs one account in five times a second: attempt limits would throttle it.
    THROTTLE_EMAIL_MAX_ATTEMPTS: '1000000',
    THROTTLE_IP_MAX_ATTEMPTS: '1000000',
  });
  addUser(env, { email, password });
  // Not pinned, and its log lines (warnings and above) go straight to this terminal.
  const gatehouse = await startServer('Gatehouse', gatehouseArgs, env, {
    cpu: null,
    stdio: 'inherit',
  });
  const { child, pid } = gatehouse;
  server = child;
  log(`Gatehouse pid ${pid} on ${base}; ${rps} req/s for ${minutes} min`);

  const sessions: string[] = [];
  const statuses: Record<string, number> = {};
  const latencies: number[] = [];
  const fail: string[] = [];
  const count = (kind: string, status: number | string | undefined): void => {
    const key = `${kind} ${status}`;
    statuses[key] = (statuses[key] ?? 0) + 1;
    if (typeof status === 'number' && status >= 500 && fail.length < 5) fail.push(key);
  };

  async function signIn(right: boolean): Promise<number | undefined> {
    const localAddress = randomLoopback();
    const csrf = await request(`${base}/api/auth/csrf`, { localAddress });
    const { csrfToken } = JSON.parse(csrf.text) as { csrfToken: string };
    const cookie = csrf.cookies.join('; ');
    const who = right ? email : `nobody-${randomBytes(6).toString('hex')}@example.com`;
    const response = await request(`${base}/api/auth/callback/credentials`, {
      method: 'POST',
      localAddress,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-auth-return-redirect': '1',
        cookie,
      },
      body: new URLSearchParams({
        csrfToken,
        email: who,
        password: right ? password : 'a-wrong-password-here',
      }).toString(),
    });
    const session = response.cookies.find((c) => c.startsWith('authjs.session-token='));
    if (session !== undefined) {
      sessions.push(`${cookie}; ${session}`);
      if (sessions.length > sessionsKept) sessions.shift();
    }
    return response.status;
  }

  async function one(kind: string): Promise<void> {
    const t0 = performance.now();
    let status: number | string | undefined;
    try {
      if (kind === 'signin-ok' || kind === 'signin-wrong') {
        status = await signIn(kind === 'signin-ok');
      } else if (kind === 'session' && sessions.length > 0) {
        const cookie = sessions[Math.floor(Math.random() * sessions.length)];
        status = (await request(`${base}/api/auth/session`, { headers: { cookie } })).status;
      } else {
        status = (await request(`${base}/api/health`)).status;
      }
    } catch (error) {
      status = 'network-error';
      if (fail.length < 5) {
        fail.push(`${kind}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    latencies.push(performance.now() - t0);
    count(kind, status);
  }

  const samples: Sample[] = [];
  const started = performance.now();
  const endAt = started + minutes * 60_000;
  let nextSample = started;
  let sent = 0;
  const inFlight = new Set<Promise<void>>();
  while (performance.now() < endAt) {
    if (child.exitCode !== null) throw new Error(`Gatehouse exited (${child.exitCode})`);
    const now = performance.now();
    if (now >= nextSample) {
      const stats = procStats(pid);
      const sorted = latencies.splice(0).sort((a, b) => a - b);
      const p99 = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0;
      const poolFull = sessions.length >= sessionsKept;
      samples.push({ minute: (now - started) / 60_000, ...stats, p99, sent, poolFull });
      log(
        `t=${((now - started) / 1000).toFixed(0)}s rss=${stats.rssMb.toFixed(1)} MB fds=${stats.fds} p99=${p99.toFixed(1)} ms sent=${sent} sessions=${sessions.length}`,
      );
      nextSample += sampleEveryMs;
    }
    // Open loop: requests leave on schedule whatever the answers do, as real clients would.
    const due = Math.floor(((now - started) / 1000) * rps);
    while (sent < due) {
      const task = one(mix[sent % mix.length]);
      inFlight.add(task);
      void task.finally(() => inFlight.delete(task));
      sent += 1;
    }
    await sleep(5);
  }
  await Promise.all(inFlight);
  samples.push({
    minute: (performance.now() - started) / 60_000,
    ...procStats(pid),
    p99: 0,
    sent,
    poolFull: sessions.length >= sessionsKept,
  });
  return { samples, statuses, fail, sent };
}

function report({ samples, statuses, fail, sent }: Soak): boolean {
  const fiveXx = Object.entries(statuses)
    .filter(([key]) => /\s5\d\d$|network-error$/.test(key))
    .reduce((s, [, n]) => s + n, 0);
  // The trend is judged once the session pool is full, and over the second half at least.
  const settled = samples.filter((s) => s.poolFull && s.minute >= minutes / 2);
  const rssSlope = slope(settled.map((s) => ({ x: s.minute, y: s.rssMb })));
  const first = samples[1] ?? samples[0];
  const last = samples[samples.length - 1];
  const lines = [
    '',
    `| minute | RSS MB | open fds | p99 ms (last 10 s) | requests sent |`,
    `| -----: | -----: | -------: | -----------------: | ------------: |`,
    ...samples.map(
      (s) =>
        `| ${s.minute.toFixed(1)} | ${s.rssMb.toFixed(1)} | ${s.fds} | ${s.p99 ? s.p99.toFixed(1) : '—'} | ${s.sent} |`,
    ),
    '',
    `Answers: ${JSON.stringify(statuses)}`,
    '',
    'Checks:',
    `- ${fiveXx === 0 ? 'PASS' : 'FAIL'} no 5xx or network error: ${fiveXx} in ${sent} requests${fail.length ? ` (${fail.join(', ')})` : ''}`,
    `- ${last.fds <= first.fds + 5 ? 'PASS' : 'FAIL'} open file descriptors do not grow: ${first.fds} after the first 10 s, ${last.fds} at the end`,
    // Under 1 MB per minute: a leak of one session's state per request would show as tens of
    // MB per minute at this rate.
    settled.length < 6
      ? `- SKIP no RSS growth trend: the run ended before ${sessionsKept} sessions filled the pool for a minute (SOAK_MINUTES=15 or more at the default rate)`
      : `- ${rssSlope < 1 ? 'PASS' : 'FAIL'} no RSS growth trend from minute ${settled[0].minute.toFixed(1)} on (session pool full): ${rssSlope.toFixed(2)} MB/min (< 1 MB/min); ${first.rssMb.toFixed(1)} MB after 10 s, ${last.rssMb.toFixed(1)} MB at the end`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  return lines.some((line) => line.startsWith('- FAIL'));
}

// The whole run is bounded: start-up, the soak, and a minute to finish and clean up.
const watchdog = setTimeout(
  () => {
    log('watchdog: the soak ran past its time; stopping');
    void cleanup().then(() => process.exit(2));
  },
  (minutes + 2) * 60_000,
);
try {
  const failed = report(await main());
  clearTimeout(watchdog);
  await cleanup();
  process.exit(failed ? 1 : 0);
} catch (error) {
  clearTimeout(watchdog);
  log(`could not run: ${error instanceof Error ? error.message : String(error)}`);
  await cleanup();
  process.exit(2);
}
