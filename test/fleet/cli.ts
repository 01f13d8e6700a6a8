// `npm run fleet` (`node test/fleet/cli.ts`): PostgreSQL, three Gatehouse instances and nginx on
// loopback (test/fleet/harness/), then every scenario in turn, with its figures. Exits 1 if a
// scenario's expectation fails, 2 if the fleet could not run; stops everything it started on
// every exit path (Ctrl-C, error, the watchdog: FLEET_TIMEOUT seconds, default 240).
// fleet.test.ts runs the same scenarios with vitest's expectations; this prints their figures.
import { fleetUnavailable, startFleet, type Fleet } from './harness/fleet.ts';
import { killAllNow, stopAll } from './harness/processes.ts';
import {
  crossRead,
  kill9,
  postgresRestart,
  revocation,
  rollingRestart,
  throttle,
  type Scenario,
} from './harness/scenarios.ts';

const timeoutS = Number(process.env.FLEET_TIMEOUT ?? 240);

let exiting = false;
const write = (message: string) => process.stderr.write(`[fleet] ${message}\n`);
// Once bailing out, a scenario still running would only report the fleet being torn down.
const log = (message: string) => exiting || write(message);
const stack = (error: unknown) =>
  error instanceof Error ? (error.stack ?? String(error)) : String(error);

async function bail(code: number, message?: string): Promise<void> {
  if (exiting) return;
  exiting = true;
  if (message) write(message);
  await stopAll();
  process.exit(code);
}
process.on('exit', killAllNow);
process.on('SIGINT', () => void bail(130, 'interrupted; stopped everything it started'));
process.on('SIGTERM', () => void bail(143, 'terminated; stopped everything it started'));
process.on('SIGHUP', () => void bail(129, 'hung up; stopped everything it started'));
process.on('uncaughtException', (error) => void bail(2, stack(error)));
process.on('unhandledRejection', (error) => void bail(2, stack(error)));
setTimeout(
  () => void bail(2, `watchdog: still running after ${timeoutS} s`),
  timeoutS * 1000,
).unref();

const why = fleetUnavailable();
if (why !== undefined) await bail(2, `cannot run: ${why}`);

/**
 * One scenario as this CLI runs it: the verdict with its time, the figures, the problems;
 * resolves to whether it passed.
 */
function step<Result, Options>(
  title: string,
  run: Scenario<Result, Options>,
  figures: (r: Result) => string[],
) {
  return async (fleet: Fleet): Promise<boolean> => {
    const t0 = Date.now();
    const result = await run(fleet);
    const problems = run.problems(result);
    log(`${problems.length === 0 ? 'PASS' : 'FAIL'} ${title} (${Date.now() - t0} ms)`);
    for (const line of figures(result)) log(`  ${line}`);
    for (const problem of problems) log(`  problem: ${problem}`);
    return problems.length === 0;
  };
}

const scenarios = [
  step('a session made through one instance reads through every other', crossRead, (r) =>
    r.results.map((x) => `made through ${x.signedInThrough}: ${JSON.stringify(x.reads)}`),
  ),
  step('sign-out, revoke-sessions and disable end a copied cookie everywhere', revocation, (r) =>
    r.results.map(
      (x) => `${x.action}: before ${JSON.stringify(x.before)}, after ${JSON.stringify(x.after)}`,
    ),
  ),
  step('the throttle trips at the same global count', throttle, (r) =>
    r.results.map(
      (x) =>
        `${x.pattern}: refused at attempt ${x.trippedAt} of limit ${r.limit} (${x.refusedWith}); ` +
        `${x.upstreams.length > 0 ? `nginx sent them to ${x.upstreams.length} instances; ` : ''}right password after: ${JSON.stringify(x.rightPasswordAfter)}`,
    ),
  ),
  step('rolling restart under load', rollingRestart, (r) => [
    `requests ${r.total}, failed ${r.failed}, retried by nginx ${r.retried} (${JSON.stringify(r.byKind)})`,
    ...r.restarts.map(
      (x) =>
        `${x.name}: out of nginx ${x.outMs} ms, exit ${x.exitCode} at ${x.exitedMs} ms, back at ${x.backMs} ms; served ${x.servedAfterBack} after`,
    ),
  ]),
  step('kill -9 of one instance under load', kill9, (r) => [
    `killed ${r.killed}: requests ${r.total}, failed ${r.failed}, in flight on it from the kill to its exit (${r.exitMs} ms) ${r.inFlightOnIt} (failed ${r.failedInFlight}), failed otherwise ${r.failedOtherwise.length}`,
    `out of nginx ${r.removedMs} ms after the kill; while down ${r.whileDown.total} requests, ${r.whileDown.failed} failed`,
    `sessions made before the kill still read: ${r.sessionsStillRead} of ${r.sessionsBefore}; user added before: ${r.addedSignIn}`,
  ]),
  step('PostgreSQL restarted under load', postgresRestart, (r) => [
    `down ${r.downMs} ms (stop ${r.stopMs} ms, start ${r.startMs} ms); readiness 503 in ${r.readiness503WhileDown} of ${r.probesWhileDown} probes; liveness failures ${r.livenessNot200WhileDown}; exits ${r.exitedWhileDown}`,
    `all ready ${r.recoverMs} ms after PostgreSQL was told to start, first session read ${r.firstSuccessMs} ms; same processes: ${r.sameProcesses}`,
    `load ${r.load.total} requests, ${r.load.failed} failed (started while down: ${r.loadWhileDown.failed} of ${r.loadWhileDown.total}, statuses ${JSON.stringify(r.loadStatusesWhileDown)}); after recovery ${r.afterRecovery.failed} of ${r.afterRecovery.total} failed`,
  ]),
];

let failed = 0;
try {
  const fleet = await startFleet({ instances: 3, log });
  for (const run of scenarios) if (!(await run(fleet))) failed += 1;
  await fleet.stop();
} catch (error) {
  await bail(2, stack(error));
}
log(failed === 0 ? 'every scenario passed' : `${failed} scenario(s) failed`);
await bail(failed === 0 ? 0 : 1);
