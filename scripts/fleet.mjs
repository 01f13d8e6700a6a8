// `npm run fleet`: PostgreSQL, three Gatehouse instances and nginx on loopback (scripts/fleet/),
// then every scenario in turn, with its figures. Exits 1 if a scenario's expectation fails, 2 if
// the fleet could not run; stops everything it started on every exit path (Ctrl-C, error,
// the watchdog: FLEET_TIMEOUT seconds, default 240).
import { fleetUnavailable, startFleet } from './fleet/fleet.mjs';
import { killAllNow, stopAll } from './fleet/processes.mjs';
import {
  crossRead,
  kill9,
  postgresRestart,
  revocation,
  rollingRestart,
  throttle,
} from './fleet/scenarios.mjs';

const timeoutS = Number(process.env.FLEET_TIMEOUT ?? 240);

let exiting = false;
const write = (message) => process.stderr.write(`[fleet] ${message}\n`);
// Once bailing out, a scenario still running would only report the fleet being torn down.
const log = (message) => exiting || write(message);

async function bail(code, message) {
  if (exiting) return;
  exiting = true;
  if (message) write(message);
  await stopAll();
  process.exit(code);
}
process.on('exit', killAllNow);
process.on('SIGINT', () => bail(130, 'interrupted; stopped everything it started'));
process.on('SIGTERM', () => bail(143, 'terminated; stopped everything it started'));
process.on('SIGHUP', () => bail(129, 'hung up; stopped everything it started'));
process.on('uncaughtException', (error) => bail(2, error?.stack ?? String(error)));
process.on('unhandledRejection', (error) => bail(2, error?.stack ?? String(error)));
setTimeout(() => bail(2, `watchdog: still running after ${timeoutS} s`), timeoutS * 1000).unref();

const why = fleetUnavailable();
if (why !== undefined) await bail(2, `cannot run: ${why}`);

const figures = {
  crossRead: (r) =>
    r.results.map((x) => `made through ${x.signedInThrough}: ${JSON.stringify(x.reads)}`),
  revocation: (r) =>
    r.results.map(
      (x) => `${x.action}: before ${JSON.stringify(x.before)}, after ${JSON.stringify(x.after)}`,
    ),
  throttle: (r) =>
    r.results.map(
      (x) =>
        `${x.pattern}: refused at attempt ${x.trippedAt} of limit ${r.limit} (${x.refusedWith}); ` +
        `${x.upstreams.length > 0 ? `nginx sent them to ${x.upstreams.length} instances; ` : ''}right password after: ${JSON.stringify(x.rightPasswordAfter)}`,
    ),
  rollingRestart: (r) => [
    `requests ${r.total}, failed ${r.failed}, retried by nginx ${r.retried} (${JSON.stringify(r.byKind)})`,
    ...r.restarts.map(
      (x) =>
        `${x.name}: out of nginx ${x.outMs} ms, exit ${x.exitCode} at ${x.exitedMs} ms, back at ${x.backMs} ms; served ${x.servedAfterBack} after`,
    ),
  ],
  kill9: (r) => [
    `killed ${r.killed}: requests ${r.total}, failed ${r.failed}, in flight on it from the kill to its exit (${r.exitMs} ms) ${r.inFlightOnIt} (failed ${r.failedInFlight}), failed otherwise ${r.failedOtherwise.length}`,
    `out of nginx ${r.removedMs} ms after the kill; while down ${r.whileDown.total} requests, ${r.whileDown.failed} failed`,
    `sessions made before the kill still read: ${r.sessionsStillRead} of ${r.sessionsBefore}; user added before: ${r.addedSignIn}`,
  ],
  postgresRestart: (r) => [
    `down ${r.downMs} ms (stop ${r.stopMs} ms, start ${r.startMs} ms); readiness 503 in ${r.readiness503WhileDown} of ${r.probesWhileDown} probes; liveness failures ${r.livenessNot200WhileDown}; exits ${r.exitedWhileDown}`,
    `all ready ${r.recoverMs} ms after PostgreSQL was told to start, first session read ${r.firstSuccessMs} ms; same processes: ${r.sameProcesses}`,
    `load ${r.load.total} requests, ${r.load.failed} failed (started while down: ${r.loadWhileDown.failed} of ${r.loadWhileDown.total}, statuses ${JSON.stringify(r.loadStatusesWhileDown)}); after recovery ${r.afterRecovery.failed} of ${r.afterRecovery.total} failed`,
  ],
};

const scenarios = [
  ['a session made through one instance reads through every other', crossRead, 'crossRead'],
  [
    'sign-out, revoke-sessions and disable end a copied cookie everywhere',
    revocation,
    'revocation',
  ],
  ['the throttle trips at the same global count', throttle, 'throttle'],
  ['rolling restart under load', rollingRestart, 'rollingRestart'],
  ['kill -9 of one instance under load', kill9, 'kill9'],
  ['PostgreSQL restarted under load', postgresRestart, 'postgresRestart'],
];

let failed = 0;
try {
  const fleet = await startFleet({ instances: 3, log });
  for (const [title, run, key] of scenarios) {
    const t0 = Date.now();
    const result = await run(fleet);
    const problems = run.problems(result);
    log(`${problems.length === 0 ? 'PASS' : 'FAIL'} ${title} (${Date.now() - t0} ms)`);
    for (const line of figures[key](result)) log(`  ${line}`);
    for (const problem of problems) log(`  problem: ${problem}`);
    if (problems.length > 0) failed += 1;
  }
  await fleet.stop();
} catch (error) {
  await bail(2, error?.stack ?? String(error));
}
log(failed === 0 ? 'every scenario passed' : `${failed} scenario(s) failed`);
await bail(failed === 0 ? 0 : 1);
