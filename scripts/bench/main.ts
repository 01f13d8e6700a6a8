// `npm run bench`: the session read as users run it (as-run.ts: `npm start`'s command, the default
// log level, output to a file and to a pipe, a browser's cookie jar) against a bare node:http
// floor, then the token routes the same way (token-routes.ts), about 4 minutes. With `--full` (about 13 minutes) also throughput, latency, sign-in
// cost, start-up and memory of Gatehouse with fast paths on and off (LOG_LEVEL=warn), the
// session read on PostgreSQL beside SQLite, what metrics cost it, and the fleet. With
// `--compare <dist folder>` (repeatable), a copy of another build gets a row in the first table.
// A report, not a test: missed targets print FAIL and still exit 0; a benchmark that could not
// measure (server would not start, 5xx, wrong answers) exits 1, because its figures would be
// meaningless; without wrk it exits 2.
// Env: BENCH_DURATION (default 8s); TEST_POSTGRES_URL (scripts/with-postgres.sh sets it).
// This file is the runner: the order, the durations, the CPU pinning, the watchdog and the
// report file. Each measurement is in its own file beside it.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { asRunReport, asRunRounds, benchAsRun } from './as-run.ts';
import {
  BenchError,
  describeError,
  gatehouseCli,
  gatehouseMain,
  log,
  now,
  root,
  warnings,
} from './common.ts';
import { benchFleet, fleetWrkRuns } from './fleet.ts';
import { hashWorker, benchHashOnly } from './hash-only.ts';
import { startBaseline, type BaselineResult } from './health.ts';
import { proberWorker } from './health-under-hashing.ts';
import { allowedCpus, cpuTicks, machineInfo, onPath, otherLoad } from './machine.ts';
import { benchMetricsCost, metricsWrkRuns } from './metrics-cost.ts';
import { bail, cleanup, installCleanupHandlers, setup } from './processes.ts';
import { prettyMarkdown, report } from './report.ts';
import { benchSessionReadPostgres, postgresWrkRuns } from './session-read-postgres.ts';
import { benchGatehouse } from './suite.ts';
import { benchTokens, tokenRounds, tokensReport } from './token-routes.ts';

// wrk runs of the two SQLite suites: health alternates three rounds on two servers, then three
// more endpoints with fast paths on and four with them off.
const suiteWrkRuns = 13;

function parseDuration(raw: string | undefined): number {
  const match = /^(\d+)(s|m)?$/.exec((raw ?? '8s').trim());
  if (!match || Number(match[1]) === 0) {
    throw new BenchError(`BENCH_DURATION must look like 8s, 30 or 1m (got ${JSON.stringify(raw)})`);
  }
  return Number(match[1]) * (match[2] === 'm' ? 60 : 1);
}

/** `--full` and `--compare <dist folder>` from the command line (npm run bench -- …). */
function parseArgs(argv: string[]): { full: boolean; compareDists: string[] } {
  let full = false;
  const compareDists: string[] = [];
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === '--full') full = true;
    else if (arg === '--compare' && argv[i + 1] !== undefined) {
      const dist = path.resolve(argv[(i += 1)] as string);
      if (!fs.existsSync(path.join(dist, 'gatehouse.mjs')))
        throw new BenchError(`--compare ${dist}: no gatehouse.mjs there`);
      compareDists.push(dist);
    } else
      throw new BenchError(`unknown argument ${JSON.stringify(arg)} (--full, --compare <dist>)`);
  }
  return { full, compareDists };
}

/** wrk and this process (the sign-in client) on one CPU, every server on another. */
function pinCpus(): void {
  const cpus = allowedCpus();
  if (!setup.taskset || cpus.length < 2) return;
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

async function main(): Promise<void> {
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
  const { full, compareDists } = parseArgs(process.argv.slice(2));
  const seconds = parseDuration(process.env.BENCH_DURATION);
  const durations = { seconds, warmup: seconds >= 4 ? 2 : 1 };
  const machine = machineInfo();
  pinCpus();

  // Worst case per phase, so a hung step cannot keep the machine busy indefinitely: each wrk
  // run with its warm-up and checks, plus start-ups, sign-ins and the flood.
  const asRunWrkRuns = asRunRounds * (4 + compareDists.length) + tokenRounds * 4;
  const wrkRuns =
    asRunWrkRuns + (full ? suiteWrkRuns + postgresWrkRuns + metricsWrkRuns + fleetWrkRuns : 0);
  const budgetS = (wrkRuns + 1) * (seconds + durations.warmup + 25) + (full ? 360 : 60);
  const watchdog = setTimeout(
    () => void bail(1, `watchdog: the benchmark ran longer than ${budgetS} s`),
    budgetS * 1000,
  );

  const asRun = await benchAsRun(durations, { compareDists });
  const tokens = await benchTokens(durations);
  const asRunText = `${asRunReport(asRun, durations)}\n## Tokens for other backends as users run them\n\n${tokensReport(tokens)}`;
  if (!full) {
    clearTimeout(watchdog);
    await cleanup();
    const elapsedS = (now() - started) / 1000;
    const load = otherLoad(ticksBefore, cpuTicks(), elapsedS);
    const conditions = [
      `Node ${machine.node}, ${machine.nproc} CPUs (${machine.cpu}), server pinned to CPU ${setup.serverCpu ?? '—'}, wrk -t1 -c32 on CPU ${setup.loadCpu ?? '—'}; ${elapsedS.toFixed(0)} s in all.`,
      ...(load === undefined
        ? []
        : [
            `Other processes used ${load.pct.toFixed(0)} % of the machine during the run (${load.otherS.toFixed(0)} CPU s, steal ${load.stealS.toFixed(0)} s).`,
          ]),
      ...warnings,
    ];
    await writeReport(
      `## The session read as users run it\n\n${asRunText}\n${conditions.map((c) => `- ${c}`).join('\n')}\n`,
    );
    return;
  }

  const baselineServer = await startBaseline();
  const hashOnly = await benchHashOnly();
  const on = await benchGatehouse(true, durations, baselineServer);
  // Given the baseline server, the fast-paths-on suite hands back the baseline's figures too.
  const baseline = on.baseline as BaselineResult;
  const off = await benchGatehouse(false, durations);
  const postgres = await benchSessionReadPostgres(durations);

  // Slot: "metrics on vs off" on the session read (METRICS_PORT unset vs set), implemented in
  // metrics-cost.ts; it reads about 0 % until Gatehouse serves metrics on METRICS_PORT.
  const metrics = await benchMetricsCost(durations);

  // Last: the fleet unpins the runner (scripts/bench/fleet.ts).
  const fleet = await benchFleet(durations);

  clearTimeout(watchdog);
  await cleanup();

  const elapsedS = (now() - started) / 1000;
  const load = otherLoad(ticksBefore, cpuTicks(), elapsedS);
  if (load && load.pct > 5) {
    warnings.push(
      `other processes used ${load.pct.toFixed(0)} % of the machine during the run: figures are noisy, rerun on a quiet machine before comparing`,
    );
  }
  await writeReport(
    `## The session read as users run it\n\n${asRunText}\n${report({
      machine,
      durations,
      baseline,
      hashOnly,
      on,
      off,
      postgres,
      metrics,
      fleet,
      elapsedS,
      load,
    })}`,
  );
}

/** Prints the report and writes it to bench-results.md in the current folder. */
async function writeReport(markdown: string): Promise<void> {
  const resultsFile = path.resolve(process.cwd(), 'bench-results.md');
  const text = await prettyMarkdown(markdown, resultsFile);
  process.stdout.write(`\n${text}`);
  fs.writeFileSync(
    resultsFile,
    await prettyMarkdown(`# Gatehouse benchmark\n\n${text}`, resultsFile),
  );
  log(`written to ${resultsFile}`);
}

// The same file runs the two helper processes the measurements spawn.
const role = process.argv[2];
if (role === '--hash-worker') await hashWorker();
else if (role === '--prober') await proberWorker(process.argv[3]);
else {
  installCleanupHandlers();
  main().then(
    () => process.exit(0),
    (error: unknown) => bail(1, error instanceof BenchError ? error.message : describeError(error)),
  );
}
