// The session read as users run it (issue 29): Gatehouse started with `npm start`'s command, in
// production, at the default log level (every answer's access line written), its output to a
// file (and, on a second row, to a pipe the runner drains), read with the cookie jar a browser
// holds after signing in; LOG_LEVEL=warn only as a labelled row of its own, and a row reading 32
// sessions in turn on every connection (a proxy's kept-alive connections carry many users). Against the bare
// node:http floor in the same rounds: req/s and its ratio, the server's CPU per request (from
// /proc/<pid>/stat of the node process itself over the measured run), start-up and RSS after
// load. With `compareDists`, other builds (copies of older dist/ folders) get a row each, so a
// change is measured before and after in one run.
import fs from 'node:fs';
import path from 'node:path';
import { gatehouseArgs, log, median, type Durations, type Env } from './common.ts';
import { addUser, benchEnv, randomSecret, sqliteUrl } from './gatehouse.ts';
import { healthEndpoint, startBaseline } from './health.ts';
import { signIn } from './http.ts';
import { rssMb } from './machine.ts';
import { makeTemp, stopChild } from './processes.ts';
import { cpuPerRequest } from './rounds.ts';
import { browserCookie, sessionJarEndpoint, sessionJarsEndpoint } from './session-read.ts';
import { startTimed, type TimedServer } from './startup.ts';
import { measure, type Endpoint, type WrkResult } from './wrk.ts';

export const asRunRounds = 3;

/** Issue 29's goals, each against the bare node:http floor of the same run. */
export const asRunTargets = { ratio: 0.5, cpuUs: 50, startup: 2.0, rss: 1.5 };

/** One configuration of Gatehouse read in the rounds. */
interface Config {
  key: string;
  label: string;
  env: Env;
  output: 'file' | 'pipe';
  /**
   * Sessions read in turn, one per request whatever the connection (as a proxy's kept-alive
   * upstream connections carry many users' cookies); one browser's jar if omitted.
   */
  sessions?: number;
  /** A dist/ folder other than this checkout's (an older build, for before/after). */
  dist?: string;
}

/** One row of the table: a server's figures over every round. */
export interface AsRunRow {
  label: string;
  rounds: number[];
  rps: number;
  /** Median of the rounds' ratios to the baseline's health in the same round. */
  ratio: number;
  p50: number;
  p99: number;
  cpuUs: number;
  startupMs: number;
  /** Every timed start, in order. */
  startups: number[];
  rssAfter: number;
}

export interface AsRunResult {
  rounds: number;
  baseline: AsRunRow;
  rows: AsRunRow[];
  /** The log file of the first row after the run, so the report can say lines were written. */
  logLines: number;
}

/** Sign-ins of the row read as many users through one proxy: wrk's connections. */
const manySessions = 32;

const configs = (compareDists: string[]): Config[] => [
  { key: 'file', label: 'default log level, stdout to a file', env: {}, output: 'file' },
  { key: 'pipe', label: 'default log level, stdout to a drained pipe', env: {}, output: 'pipe' },
  {
    key: 'warn',
    label: 'LOG_LEVEL=warn, stdout to a file',
    env: { LOG_LEVEL: 'warn' },
    output: 'file',
  },
  {
    key: 'sessions',
    label: `default log level, stdout to a file, ${manySessions} sessions in turn`,
    env: {},
    output: 'file',
    sessions: manySessions,
  },
  ...compareDists.map((dist, i) => ({
    key: `compare-${i}`,
    label: `${dist}: default log level, stdout to a file`,
    env: {},
    output: 'file' as const,
    dist,
  })),
];

/** Servers the rounds read: the baseline's health, or a Gatehouse configuration's session. */
interface Side {
  label: string;
  server: TimedServer;
  endpoint: Endpoint;
  results: WrkResult[];
}

async function startGatehouse(config: Config, dir: string): Promise<Side & { logFile?: string }> {
  const dataDir = path.join(dir, config.key);
  fs.mkdirSync(dataDir);
  const secret = randomSecret();
  addUser(
    { DATABASE_URL: sqliteUrl(dataDir), DATA_DIR: dataDir },
    { email: 'bench@example.com', password: 'bench-password-correct-horse', name: 'Bench' },
    config.dist === undefined ? undefined : path.join(config.dist, 'gatehouse-cli.cjs'),
  );
  const env = (port: number): Env => {
    // The default log level unless the row names one: benchEnv's warn is the flattering case.
    const env = { ...benchEnv({ port, dataDir, secret, fastPaths: true }), ...config.env };
    if (config.env.LOG_LEVEL === undefined) delete env.LOG_LEVEL;
    return env;
  };
  const args =
    config.dist === undefined
      ? gatehouseArgs
      : [...gatehouseArgs.slice(0, -1), path.join(config.dist, 'gatehouse.mjs')];
  const logFile = config.output === 'file' ? path.join(dir, `${config.key}.log`) : undefined;
  const fd = logFile === undefined ? undefined : fs.openSync(logFile, 'a');
  log(`as run, ${config.label}: start-up`);
  try {
    const server = await startTimed(config.label, args, env, {
      ...(fd !== undefined && { stdio: ['ignore', fd, fd] }),
    });
    const cookies: string[] = [];
    for (let i = 0; i < (config.sessions ?? 1); i += 1) {
      cookies.push(browserCookie(await signIn(server.base)));
    }
    return {
      label: config.label,
      server,
      endpoint:
        cookies.length === 1
          ? sessionJarEndpoint(cookies[0] as string)
          : sessionJarsEndpoint(cookies),
      results: [],
      ...(logFile !== undefined && { logFile }),
    };
  } finally {
    // The child holds its own copy of the descriptor.
    if (fd !== undefined) fs.closeSync(fd);
  }
}

function row(side: Side, baseline: WrkResult[]): AsRunRow {
  const sorted = [...side.results].sort((a, b) => a.rps - b.rps);
  const mid = sorted[(sorted.length - 1) >> 1] as WrkResult;
  return {
    label: side.label,
    rounds: side.results.map((r) => r.rps),
    rps: mid.rps,
    ratio: median(side.results.map((r, i) => r.rps / (baseline[i] as WrkResult).rps)),
    p50: mid.p50,
    p99: mid.p99,
    cpuUs: cpuPerRequest(side.results)?.server ?? NaN,
    startupMs: side.server.startupMs,
    startups: side.server.startups,
    rssAfter: rssMb(side.server.pid),
  };
}

/**
 * Every configuration started (five timed starts each, the last stays up), then `rounds`
 * rounds, each reading the baseline's health and every configuration's session once, the
 * order rotated by round so no server always goes first; the warm-up only in the first.
 */
export async function benchAsRun(
  durations: Durations,
  { compareDists = [], rounds = asRunRounds }: { compareDists?: string[]; rounds?: number },
): Promise<AsRunResult> {
  const dir = makeTemp('as-run');
  const baselineServer = await startBaseline();
  const sides: (Side & { logFile?: string })[] = [
    {
      label: 'bare node:http (health)',
      server: baselineServer,
      endpoint: healthEndpoint,
      results: [],
    },
  ];
  for (const config of configs(compareDists)) sides.push(await startGatehouse(config, dir));
  for (let round = 0; round < rounds; round += 1) {
    const these = round === 0 ? durations : { ...durations, warmup: 0 };
    const order = sides.map((_, i) => sides[(i + round) % sides.length] as Side);
    for (const side of order) {
      const pid = side.server.pid;
      side.results.push(
        await measure(side.server, side.endpoint, these, dir, {
          cpu: () => Promise.resolve({ server: [pid] }),
        }),
      );
    }
  }
  const [base, ...rest] = sides as [Side, ...(Side & { logFile?: string })[]];
  const result: AsRunResult = {
    rounds,
    baseline: row(base, base.results),
    rows: rest.map((side) => row(side, base.results)),
    logLines: 0,
  };
  for (const side of sides) await stopChild(side.server.child);
  const firstLog = rest[0]?.logFile;
  if (firstLog !== undefined) {
    result.logLines = fs.readFileSync(firstLog, 'utf8').split('\n').length - 1;
  }
  return result;
}

const int = (v: number): string =>
  Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : '—';
const times = (v: number): string => (Number.isFinite(v) ? `${v.toFixed(2)}×` : '—');
const mark = (ok: boolean): string => (ok ? 'PASS' : 'FAIL');

/** The Markdown table and the checks against issue 29's goals (the first row is the one judged). */
export function asRunReport(result: AsRunResult, durations: Durations): string {
  const { baseline: b, rows } = result;
  const lines = [
    '| as users run it (`npm start`, production) | req/s | ratio to bare | p50 ms | p99 ms | server CPU µs/req | start-up ms | start-up vs bare | RSS after load MB | RSS vs bare |',
    '| --- | --: | --: | --: | --: | --: | --: | --: | --: | --: |',
    `| ${b.label} | ${int(b.rps)} | 1.00× | ${b.p50.toFixed(2)} | ${b.p99.toFixed(2)} | ${b.cpuUs.toFixed(1)} | ${int(b.startupMs)} | 1.00× | ${b.rssAfter.toFixed(1)} | 1.00× |`,
  ];
  for (const r of rows) {
    lines.push(
      `| session read, ${r.label} | ${int(r.rps)} | ${times(r.ratio)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.cpuUs.toFixed(1)} | ${int(r.startupMs)} | ${times(r.startupMs / b.startupMs)} | ${r.rssAfter.toFixed(1)} | ${times(r.rssAfter / b.rssAfter)} |`,
    );
  }
  const judged = rows[0] as AsRunRow;
  const t = asRunTargets;
  const checks = [
    `${mark(judged.ratio >= t.ratio)} session read ${times(judged.ratio)} of bare node:http health (target ≥ ${t.ratio}×)`,
    `${mark(judged.cpuUs <= t.cpuUs)} server CPU ${judged.cpuUs.toFixed(1)} µs per session read (target ≤ ${t.cpuUs})`,
    `${mark(judged.startupMs / b.startupMs <= t.startup)} start-up ${times(judged.startupMs / b.startupMs)} of bare (target ≤ ${t.startup}×)`,
    `${mark(judged.rssAfter / b.rssAfter <= t.rss)} RSS after load ${times(judged.rssAfter / b.rssAfter)} of bare (target ≤ ${t.rss}×)`,
  ];
  const notes = [
    `${result.rounds} rounds of ${durations.seconds} s per server (warm-up ${durations.warmup} s before the first), the order rotated each round; req/s, p50 and p99 are each server's median round, the ratio the median of the rounds' ratios to the baseline's health in the same round, CPU the server process's user + system time (all its threads) over every measured run divided by the requests.`,
    `Every round's req/s: ${[b, ...rows].map((r) => `${r.label} ${r.rounds.map(int).join(' / ')}`).join('; ')}.`,
    `Start-up: median of five starts to the first 200 from /api/health (${[b, ...rows].map((r) => `${r.label} ${r.startups.map(int).join('/')}`).join('; ')} ms); RSS after the last round.`,
    `The default-level file row's log held ${int(result.logLines)} lines after the run (one access line per answer).`,
  ];
  return `${lines.join('\n')}\n\n${checks.map((c) => `- ${c}`).join('\n')}\n\n${notes.map((n) => `- ${n}`).join('\n')}\n`;
}
