// The report: the Markdown the runner prints and writes to bench-results.md (tables, notes on
// method, the run's conditions, and each target as PASS, FAIL or SKIP).
import path from 'node:path';
import { gatehouseArgs, root, warnings, type Durations } from './common.ts';
import type { FleetBench } from './fleet.ts';
import { healthRounds, type BaselineResult } from './health.ts';
import { hashingLoad } from './health-under-hashing.ts';
import type { MachineInfo, OtherLoad } from './machine.ts';
import { metricsMaxCostPct, type MetricsCost } from './metrics-cost.ts';
import { setup, startupPollMs } from './processes.ts';
import {
  postgresRounds,
  postgresTargetRatio,
  type PostgresResult,
} from './session-read-postgres.ts';
import { unrelatedCookies } from './session-read.ts';
import { signInConcurrency, type Rates } from './signin.ts';
import { startupRuns } from './startup.ts';
import type { SuiteResult } from './suite.ts';
import { wrkLine } from './wrk.ts';

/** Everything one run measured, as the runner hands it over. */
export interface BenchResults {
  machine: MachineInfo;
  durations: Durations;
  baseline: BaselineResult;
  hashOnly: Rates;
  on: SuiteResult;
  off: SuiteResult;
  postgres: PostgresResult;
  metrics: MetricsCost;
  fleet: FleetBench;
  elapsedS: number;
  load: OtherLoad | undefined;
}

/** A figure; undefined or NaN where it could not be measured, printed as —. */
type Figure = number | undefined;
const finite = (v: Figure): v is number => Number.isFinite(v);

type Format = (v: Figure) => string;

const fmt = {
  rps: (v: Figure): string => (finite(v) ? Math.round(v).toLocaleString('en-US') : '—'),
  ms: (v: Figure): string => (finite(v) ? v.toFixed(v < 10 ? 2 : 1) : '—'),
  ops: (v: Figure): string => (finite(v) ? v.toFixed(1) : '—'),
  int: (v: Figure): string => (finite(v) ? String(Math.round(v)) : '—'),
  mb: (v: Figure): string => (finite(v) ? v.toFixed(1) : '—'),
  ratio: (a: Figure, b: Figure): string =>
    finite(a) && finite(b) && b > 0 ? `${(a / b).toFixed(2)}×` : '—',
};

const signed = (value: number): string => `${value >= 0 ? '+' : ''}${value.toFixed(1)}`;
const fmtRuns = (result: { startups: number[] }): string =>
  result.startups.map((ms) => Math.round(ms)).join('/');
const check = (ok: boolean, text: string): string => `${ok ? 'PASS' : 'FAIL'} ${text}`;
const list = (items: string[]): string => items.map((item) => `- ${item}`).join('\n');

/** The main table: baseline, fast paths on, fast paths off. */
function mainTable({ baseline, hashOnly, on, off }: BenchResults): string {
  const rows: string[] = [];
  const row = (
    name: string,
    format: Format,
    b: Figure,
    o: Figure,
    f: Figure,
    {
      base = b,
      mark = '',
      ratio,
    }: { base?: Figure; mark?: string; ratio?: number | undefined } = {},
  ): void => {
    const onBase = ratio === undefined ? fmt.ratio(o, base) : `${ratio.toFixed(2)}×`;
    rows.push(
      `| ${name} | ${format(b)} | ${format(o)} | ${format(f)} | ${onBase}${onBase === '—' ? '' : mark} | ${fmt.ratio(o, f)} |`,
    );
  };
  const bh = baseline.health;
  const endpoints: [keyof SuiteResult['http'], string][] = [
    ['health', 'health'],
    ['sessionJar', 'session (cookie jar)'],
    ['sessionNone', 'session (no cookie)'],
    ['csrf', 'csrf'],
  ];
  const stats: ['rps' | 'p50' | 'p99', string, Format][] = [
    ['rps', 'req/s', fmt.rps],
    ['p50', 'p50 ms', fmt.ms],
    ['p99', 'p99 ms', fmt.ms],
  ];
  for (const [key, name] of endpoints) {
    const b = key === 'health' ? bh : undefined;
    const mark = key === 'health' ? '' : ' †';
    for (const [stat, label, format] of stats) {
      const paired = key === 'health' && stat === 'rps';
      row(`${name} ${label}`, format, b?.[stat], on.http[key][stat], off.http[key][stat], {
        base: bh[stat],
        mark: paired ? ' §' : mark,
        ratio: paired ? (on.http.health.pairedRatio ?? NaN) : undefined,
      });
    }
  }
  const vsHash = (base: number): { base: number; mark: string } => ({ base, mark: ' ‡' });
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
  return [
    '| metric | baseline (node:http) | Gatehouse fast paths on | Gatehouse fast paths off | ratio on/baseline | ratio on/off |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
    ...rows,
  ].join('\n');
}

/** The session read on PostgreSQL beside SQLite: a table, its note, and its target. */
function postgresPart(postgres: PostgresResult): {
  table: string | undefined;
  note: string | undefined;
  check: string;
} {
  const target = `session (cookie jar) on PostgreSQL ≥ ${postgresTargetRatio}× SQLite (fast paths on, one core)`;
  if (postgres.skipped !== undefined) {
    return { table: undefined, note: undefined, check: `SKIP ${target}: ${postgres.skipped}` };
  }
  const rows: string[] = [];
  for (const mode of ['on', 'off'] as const) {
    const { sqlite, postgres: pg, ratio } = postgres[mode];
    const name = `session (cookie jar) fast paths ${mode}`;
    rows.push(
      `| ${name} req/s | ${fmt.rps(sqlite.rps)} | ${fmt.rps(pg.rps)} | ${ratio.toFixed(2)}× ¶ |`,
    );
    const latencies: ['p50' | 'p99', string][] = [
      ['p50', 'p50 ms'],
      ['p99', 'p99 ms'],
    ];
    for (const [stat, label] of latencies) {
      rows.push(
        `| ${name} ${label} | ${fmt.ms(sqlite[stat])} | ${fmt.ms(pg[stat])} | ${fmt.ratio(pg[stat], sqlite[stat])} |`,
      );
    }
    rows.push(
      `| Gatehouse CPU µs per read, fast paths ${mode} | ${fmt.int(sqlite.cpuUs?.gatehouse)} | ${fmt.int(pg.cpuUs?.gatehouse)} | ${fmt.ratio(pg.cpuUs?.gatehouse, sqlite.cpuUs?.gatehouse)} |`,
      `| PostgreSQL server CPU µs per read, fast paths ${mode} | — | ${fmt.int(pg.cpuUs?.postgres)} | — |`,
    );
  }
  const table = [
    '| metric | SQLite | PostgreSQL | ratio PostgreSQL/SQLite |',
    '| --- | ---: | ---: | ---: |',
    ...rows,
  ].join('\n');
  const perRound = (mode: 'on' | 'off'): string =>
    `fast paths ${mode}: SQLite ${postgres[mode].sqlite.rounds.map(fmt.rps).join(' / ')}, PostgreSQL ${postgres[mode].postgres.rounds.map(fmt.rps).join(' / ')}`;
  const note = `¶ PostgreSQL beside SQLite: PostgreSQL ${postgres.version} at \`TEST_POSTGRES_URL\` (under \`npm run bench\`, scripts/with-postgres.sh's throw-away server on 127.0.0.1, fsync off), in a database made for the run, and Gatehouse started twice per mode, one on each engine (\`DATABASE_URL\`; its pool holds 10 connections), pinned like every server, read in alternating rounds (each warmed up) with the cookie jars of 32 sign-ins of the bench account, one per request in turn, so the PostgreSQL check, which batches the reads of one event-loop round into one statement, reads 32 distinct sessions as 32 browsers would (one cookie repeated would let it answer a whole batch with one row); every one of the 32 was read once, all at once, before the run and had to name the account; the req/s ratio is the median of the rounds' ratios. req/s per round: ${perRound('on')}; ${perRound('off')}. PostgreSQL's processes are not pinned: they run on whichever core is free, wrk's included. CPU per read: user + system time from \`/proc\` over the measured runs, of the Gatehouse process and of the PostgreSQL processes serving the bench database.`;
  const ratio = postgres.on.ratio;
  return {
    table,
    note,
    check: check(
      ratio >= postgresTargetRatio,
      `${target}: ${ratio.toFixed(2)}× (median of ${postgresRounds.on} paired rounds)`,
    ),
  };
}

/** Metrics on vs off on the session read: its note and its target. */
function metricsPart(metrics: MetricsCost): { note: string; check: string } {
  const answered =
    metrics.metricsStatus === null
      ? 'nothing listened there: this build has no metrics yet, so the cost is noise around 0'
      : `\`GET /metrics\` there answered ${metrics.metricsStatus}`;
  return {
    note: `Metrics cost: session (cookie jar) on two otherwise identical Gatehouse servers (SQLite, fast paths on), \`METRICS_PORT\` unset vs set to ${metrics.metricsPort} (${answered}), a new pair of servers each round (which starts and runs first alternating; two identical server processes differ by up to 7 % here for their whole life), each warmed up. req/s per round: metrics off ${metrics.off.rounds.map(fmt.rps).join(' / ')}, on ${metrics.on.rounds.map(fmt.rps).join(' / ')}; p50 ${fmt.ms(metrics.off.p50)} vs ${fmt.ms(metrics.on.p50)} ms, p99 ${fmt.ms(metrics.off.p99)} vs ${fmt.ms(metrics.on.p99)} ms (median rounds); Gatehouse CPU per read ${fmt.int(metrics.off.cpuUs?.gatehouse)} vs ${fmt.int(metrics.on.cpuUs?.gatehouse)} µs. The cost is 1 − the geometric mean of the rounds' on/off req/s ratios (four rounds in each order, so the first-in-a-pair advantage cancels).`,
    check: check(
      metrics.costPct <= metricsMaxCostPct,
      `metrics on (METRICS_PORT set) costs the session read (cookie jar) ≤ ${metricsMaxCostPct} %: ${signed(metrics.costPct)} %`,
    ),
  };
}

/** Fleet throughput: a table of req/s and latency per instance count, or why it was skipped. */
function fleetPart(fleet: FleetBench): { table: string | undefined; note: string } {
  if (fleet.skipped !== undefined)
    return { table: undefined, note: `Fleet throughput: SKIP (${fleet.skipped}).` };
  const rows = fleet.results.map(
    (r) =>
      `| ${r.instances} | ${fmt.rps(r.requestsPerSecond)} | ${fmt.ms(r.latencyMs.p50)} | ${fmt.ms(r.latencyMs.p99)} | ${r.non2xx} |`,
  );
  return {
    table: [
      '| Fleet: instances behind nginx | session (cookie jar) req/s | p50 ms | p99 ms | non-2xx |',
      '| --- | ---: | ---: | ---: | ---: |',
      ...rows,
    ].join('\n'),
    note: `Fleet throughput: \`test/fleet/harness/throughput.ts\`: a throw-away PostgreSQL, N Gatehouse instances (production build, fast paths on) and nginx (\`least_conn\`, upstream keep-alive) on loopback, one signed-in cookie read through nginx with \`wrk -t2 -c32\` for ${fleet.results[0]?.durationSeconds ?? '?'} s per count. Unpinned: the instances, PostgreSQL, nginx and wrk share this machine's cores, so more instances only add contention here; the table shows what each hop costs, not how a fleet scales on machines of its own.`,
  };
}

export function report(results: BenchResults): string {
  const { machine, durations, baseline, hashOnly, on, off, postgres, metrics } = results;
  const fleet = fleetPart(results.fleet);
  const { elapsedS, load } = results;
  const bh = baseline.health;
  const pg = postgresPart(postgres);
  const metricsCost = metricsPart(metrics);

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
      (on.http.health.pairedRatio ?? NaN) >= 0.9,
      `health on ≥ 0.9× baseline: ${(on.http.health.pairedRatio ?? NaN).toFixed(2)}× (median of ${healthRounds} paired rounds)`,
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
    pg.check,
    metricsCost.check,
  ];

  const pin =
    setup.serverCpu === undefined
      ? 'not pinned (taskset missing or fewer than 2 CPUs allowed): figures include client/server contention'
      : `servers and the hash-only run pinned with \`taskset -c ${setup.serverCpu}\`; wrk and the sign-in client on CPU ${setup.loadCpu}`;
  const notes = [
    `† No Gatehouse route other than health exists on the baseline: session and csrf rows are compared with baseline health.`,
    `‡ Sign-in rows: ratio of Gatehouse (fast paths on) to hash-only argon2id verify at the same concurrency; near 1× means sign-in is bound by the hash.`,
    `Sign-in: each op is \`GET /api/auth/csrf\` + \`POST /api/auth/callback/credentials\` (\`X-Auth-Return-Redirect: 1\`); throttling raised to 1000000 (\`THROTTLE_{EMAIL,IP}_MAX_{FAILURES,ATTEMPTS}\`) so it does not interfere. Hash-only: \`@node-rs/argon2\` verify, m=19456, t=2, p=1, pinned like the servers.`,
    `Where sign-in time goes (fast paths on): ${fmt.ms(1000 / on.signIn.sequential)} ms per sequential sign-in (csrf + post) vs ${fmt.ms(1000 / hashOnly.sequential)} ms per bare verify; a refused POST alone takes ${fmt.ms((on.timing.unknown + on.timing.wrong) / 2)} ms (median).`,
    `Health under hashing load (fast paths on): ${on.underHashing.n} probes (a separate process, every 5 ms, a new connection each) while ${hashingLoad} sign-ins arrived at once (answers ${JSON.stringify(on.underHashing.statuses)}; 503 is the hash queue shedding load): p50 ${fmt.ms(on.underHashing.p50)} ms, p99 ${fmt.ms(on.underHashing.p99)} ms, max ${fmt.ms(on.underHashing.max)} ms; RSS after it ${fmt.mb(on.rssAfterFlood)} MB. Fast paths off: p99 ${fmt.ms(off.underHashing.p99)} ms, RSS after ${fmt.mb(off.rssAfterFlood)} MB.`,
    `Refusal timing: ${on.timing.n} + ${on.timing.n} interleaved POSTs (random order per pair), one CSRF pair reused, only the POST timed. Fast paths on: unknown email ${fmt.ms(on.timing.unknown)} ms vs wrong password ${fmt.ms(on.timing.wrong)} ms (${signed(on.timing.diffPct)} %), same response body: ${on.timing.sameBody ? 'yes' : 'NO'}. Fast paths off: ${fmt.ms(off.timing.unknown)} vs ${fmt.ms(off.timing.wrong)} ms (${signed(off.timing.diffPct)} %), same body: ${off.timing.sameBody ? 'yes' : 'NO'}.`,
    `§ Health: ${healthRounds} rounds, each a baseline run and a Gatehouse (fast paths on) run back to back, which goes first alternating; the table shows each side's median round, and the ratio is the median of the per-round ratios. req/s per round: baseline ${baseline.health.rounds.map(fmt.rps).join(' / ')}, on ${(on.http.health.rounds ?? []).map(fmt.rps).join(' / ')}.`,
    `Start-up: spawn → first 200 from \`/api/health\`, polled every ${startupPollMs} ms; runs (ms): baseline ${fmtRuns(baseline)}, on ${fmtRuns(on)}, off ${fmtRuns(off)}. RSS: VmRSS from \`/proc/<pid>/status\`; "idle" 1 s after start-up, "after load" after the sign-ins and all wrk runs.`,
    `Session cookie jar: \`authjs.session-token\` + \`authjs.csrf-token\` + \`authjs.callback-url\` + \`${unrelatedCookies}\`, one Cookie header.`,
    ...(pg.note ? [pg.note] : []),
    metricsCost.note,
    fleet.note,
  ];
  const run = [
    `Machine: nproc ${machine.nproc}, ${machine.cpu}, Node ${machine.node}; ${pin}.`,
    `Gatehouse started as \`npm start\` starts it: \`node ${[...gatehouseArgs.slice(0, -1), path.relative(root, gatehouseArgs[gatehouseArgs.length - 1])].join(' ')}\`${process.env.NODE_EXTRA_CA_CERTS ? '; NODE_EXTRA_CA_CERTS is set, which costs every node process here about 70 ms of start-up (the baseline too)' : ''}.`,
    load
      ? `Other load during the run: ${load.otherS.toFixed(1)} CPU-s by processes outside this benchmark (${load.pct.toFixed(1)} % of the machine), steal ${load.stealS.toFixed(1)} s.`
      : 'Other load during the run: unknown (no /proc/stat).',
    `wrk: \`${wrkLine(durations.seconds)}\` per endpoint (the cookie-jar run adds \`-s cookie-jar.lua\`, which sets the Cookie header), each after a ${durations.warmup} s warm-up at the same settings. Total run ${elapsedS.toFixed(0)} s.`,
    ...warnings.map((w) => `Warning: ${w}`),
  ];
  return (
    [
      mainTable(results),
      ...(pg.table ? [pg.table] : []),
      ...(fleet.table ? [fleet.table] : []),
      list(notes),
      list(run),
      `Targets:\n\n${list(checks)}`,
    ].join('\n\n') + '\n'
  );
}

/** The owner's prettier settings, when installed, so the results file passes `format:check`. */
export async function prettyMarkdown(text: string, file: string): Promise<string> {
  try {
    const prettier = await import('prettier');
    const options = (await prettier.resolveConfig(file)) ?? {};
    return await prettier.format(text, { ...options, filepath: file, parser: 'markdown' });
  } catch {
    return text;
  }
}
