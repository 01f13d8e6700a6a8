// Scenarios under load: a rolling restart, kill -9 of an instance, PostgreSQL restarted.
// Each returns what it observed; `problems(result)` says what would be wrong (see scenarios.ts).
import fs from 'node:fs';
import type { Fleet, Instance, RestartStep } from './fleet.ts';
import { Client, request, sessionCookieName, type SignInOutcome } from './http.ts';
import {
  loadPassword,
  loadSignerEmail,
  prepareLoad,
  startLoad,
  summarise,
  triedPort,
  type Load,
  type LoadOptions,
  type LoadRecord,
  type LoadSession,
  type Summary,
} from './load.ts';
import { sleep } from './processes.ts';
import { scenario } from './scenario.ts';
import { password } from './sessions.ts';

// ---------------------------------------------------------------------------------------------
const defaultLoad = { readers: 6, signers: 1, readPauseMs: 10, signPauseMs: 100 };

async function loadFor(fleet: Fleet, options: LoadOptions | undefined): Promise<Load> {
  fleet.loadSessions ??= await prepareLoad(fleet);
  return startLoad({
    origin: fleet.origin,
    sessions: fleet.loadSessions,
    ...defaultLoad,
    ...options,
  });
}

const served = (records: LoadRecord[], port: number, from: number) =>
  records.filter((r) => r.ok && r.start >= from && triedPort(r, port)).length;

/**
 * Under load, each instance in turn: out of nginx, SIGTERM, exit, started again, back in.
 * Every request counts; `failed` must be 0.
 */
export const rollingRestart = scenario(
  async (
    fleet: Fleet,
    {
      warmMs = 1000,
      settleMs = 500,
      load,
    }: { warmMs?: number; settleMs?: number; load?: LoadOptions } = {},
  ): Promise<{
    restarts: (RestartStep & { servedAfterBack: number })[];
    total: number;
    failed: number;
    byKind: Summary['byKind'];
    failures: LoadRecord[];
    retried: number;
  }> => {
    const traffic = await loadFor(fleet, load);
    await sleep(warmMs);
    const restarts: (RestartStep & { servedAfterBack: number })[] = [];
    for (const index of fleet.instances.keys()) {
      const step = await fleet.restart(index);
      const back = Date.now();
      await sleep(settleMs);
      // Back in rotation: it serves again. On a busy machine the load may take a while to reach
      // it (least_conn breaks ties in turn), so this waits up to 5 s for its first answer.
      const port = (fleet.instances[index] as Instance).port;
      for (let waited = settleMs; waited < 5000; waited += 100) {
        if (served(traffic.records, port, back) > 0) break;
        await sleep(100);
      }
      restarts.push({ ...step, servedAfterBack: served(traffic.records, port, back) });
    }
    const summary = await traffic.stop();
    return {
      restarts,
      total: summary.total,
      failed: summary.failed,
      byKind: summary.byKind,
      failures: summary.failures.slice(0, 20),
      // Requests nginx had to try on a second instance: none expected, the drain comes first.
      retried: summary.records.filter((r) => r.upstream.includes(',')).length,
    };
  },
  ({ restarts, total, failed, failures, retried }) => [
    ...(failed === 0
      ? []
      : [`${failed} of ${total} requests failed, e.g. ${JSON.stringify(failures[0])}`]),
    ...(total > 0 ? [] : ['no requests were made']),
    ...(retried === 0 ? [] : [`nginx tried a stopped instance for ${retried} requests`]),
    ...restarts.flatMap((r) => [
      ...(r.exitCode === 0 ? [] : [`${r.name} exited with ${String(r.exitCode)} on SIGTERM`]),
      ...(r.newPid !== r.oldPid ? [] : [`${r.name} was not restarted`]),
      ...(r.servedAfterBack > 0 ? [] : [`${r.name} served nothing after it was back`]),
    ]),
  ],
);

// ---------------------------------------------------------------------------------------------
/**
 * Under load, one instance gets SIGKILL. Before it: a user added by the CLI and the load's
 * sign-ins. After it: nginx routes around (the controller takes it out), the instance is
 * started again, and what was written before is read back.
 */
export const kill9 = scenario(
  async (
    fleet: Fleet,
    {
      index = 1,
      warmMs = 1500,
      downMs = 1500,
      load = { signers: 3, signPauseMs: 0 },
    }: { index?: number; warmMs?: number; downMs?: number; load?: LoadOptions } = {},
  ): Promise<{
    killed: string;
    total: number;
    failed: number;
    /** From SIGKILL to the exit being seen: requests delivered meanwhile were in flight on it. */
    exitMs: number;
    inFlightOnIt: number;
    failedInFlight: number;
    failedOtherwise: {
      kind: LoadRecord['kind'];
      msAfterKill: number;
      ms: number;
      status: number;
      upstream: string;
      reason: string | undefined;
    }[];
    removedMs: number;
    whileDown: { total: number; failed: number };
    sessionsBefore: number;
    sessionsStillRead: number;
    addedSignIn: SignInOutcome;
  }> => {
    const addedEmail = 'added-before-kill@example.com';
    const traffic = await loadFor(fleet, load);
    await fleet.addUser(addedEmail, password);
    await sleep(warmMs);
    const victim = fleet.instances[index] as Instance;
    const others = fleet.instances.filter((_, i) => i !== index).map((i) => i.port);
    // Killed while nginx has a request on it (there is no upstream keep-alive: an open connection
    // to its port is a request in flight), so the scenario is about requests in flight.
    const busyWait = Date.now();
    while (openConnections(victim.port) === 0 && Date.now() - busyWait < 2000) await sleep(2);
    const sessionsBefore = [...traffic.created];
    const killedAt = Date.now();
    // SIGKILL is not instant: until the kernel has torn the process down (unmapping a Node heap
    // takes milliseconds) its listening socket still completes handshakes, so nginx can hand it a
    // request after the signal. Such a request was delivered to the instance: in flight on it.
    const exitedAt = await fleet.kill(index);
    await fleet.controller.waitForUpstreams(others);
    const removedMs = Date.now() - killedAt;
    await sleep(downMs);
    // Enough requests while it is down to tell that nginx routes around it: on a busy machine the
    // load is slower, so this stays down up to 10 s more until more than 50 have started.
    for (let waited = 0; waited < 10_000; waited += 100) {
      if (traffic.records.filter((r) => r.start > exitedAt).length > 50) break;
      await sleep(100);
    }
    const servedWhileDown = summarise(traffic.records.filter((r) => r.start > exitedAt));
    await fleet.startAgain(index);
    await sleep(500);
    const summary = await traffic.stop();

    const inFlight = summary.records.filter(
      // Same millisecond counts as before: the clock is coarser than the event loop.
      (r) => r.start <= exitedAt && r.end > killedAt && triedPort(r, victim.port),
    );
    const failedInFlight = summary.failures.filter((r) => inFlight.includes(r));
    const failedOtherwise = summary.failures.filter((r) => !inFlight.includes(r));

    let sessionsStillRead = 0;
    for (const session of sessionsBefore) {
      const client = new Client(fleet.origin, new Map([[sessionCookieName, session.cookie]]));
      if ((await client.sessionEmail()).email === session.email) sessionsStillRead += 1;
    }
    const addedSignIn = (await new Client(fleet.origin).signIn(addedEmail, password)).outcome;
    return {
      killed: victim.name,
      total: summary.total,
      failed: summary.failed,
      exitMs: exitedAt - killedAt,
      inFlightOnIt: inFlight.length,
      failedInFlight: failedInFlight.length,
      failedOtherwise: failedOtherwise.map(({ kind, start, end, status, upstream, reason }) => ({
        kind,
        msAfterKill: start - killedAt,
        ms: end - start,
        status,
        upstream,
        reason,
      })),
      removedMs,
      whileDown: { total: servedWhileDown.total, failed: servedWhileDown.failed },
      sessionsBefore: sessionsBefore.length,
      sessionsStillRead,
      addedSignIn,
    };
  },
  (r) => [
    ...(r.failedOtherwise.length === 0
      ? []
      : [
          `${r.failedOtherwise.length} failed requests were not in flight on ${r.killed}: ${JSON.stringify(r.failedOtherwise[0])}`,
        ]),
    ...(r.whileDown.total > 0 ? [] : ['no requests were served while it was down']),
    ...(r.sessionsBefore > 0 ? [] : ['the load made no session before the kill']),
    ...(r.sessionsStillRead === r.sessionsBefore
      ? []
      : [
          `${r.sessionsBefore - r.sessionsStillRead} of ${r.sessionsBefore} sessions made before the kill were lost`,
        ]),
    ...(r.addedSignIn === 'signed-in' ? [] : [`the user added before the kill: ${r.addedSignIn}`]),
  ],
);

/** Established TCP connections to 127.0.0.1:`port` (Linux /proc/net/tcp). */
function openConnections(port: number): number {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  return fs
    .readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .slice(1)
    .filter((line) => {
      const [, local, , state] = line.trim().split(/\s+/);
      return local?.endsWith(`:${hexPort}`) && state === '01';
    }).length;
}

// ---------------------------------------------------------------------------------------------
async function probeAll(
  fleet: Fleet,
): Promise<{ name: string; ready: number; live: number; alive: boolean }[]> {
  return Promise.all(
    fleet.instances.map(async (instance) => ({
      name: instance.name,
      // What each answers, however slowly a busy machine gets there (readiness gives the
      // database 1 s): a probe that times out here would read as a wrong answer.
      ready: (await request(`${instance.url}/api/health/ready`, { timeoutMs: 10_000 })).status,
      live: (await request(`${instance.url}/api/health`, { timeoutMs: 10_000 })).status,
      alive: instance.alive(),
    })),
  );
}

/**
 * Under load, PostgreSQL gets a fast shutdown, stays down `downMs`, and starts again on the same
 * port and data. While down every instance is probed directly every 100 ms (readiness,
 * liveness, process alive); afterwards the same processes must serve again.
 */
export const postgresRestart = scenario(
  async (
    fleet: Fleet,
    {
      downMs = 2000,
      tailMs = 1500,
      load,
    }: { downMs?: number; tailMs?: number; load?: LoadOptions } = {},
  ): Promise<{
    stopMs: number;
    downMs: number;
    startMs: number;
    recoverMs: number | undefined;
    firstSuccessMs: number | undefined;
    probesWhileDown: number;
    readiness503WhileDown: number;
    readinessOtherWhileDown: {
      name: string;
      ready: number;
      live: number;
      alive: boolean;
      at: number;
    }[];
    livenessNot200WhileDown: number;
    exitedWhileDown: number;
    sameProcesses: boolean;
    load: { total: number; failed: number };
    loadWhileDown: { total: number; failed: number };
    loadStatusesWhileDown: Record<string, number>;
    afterRecovery: { total: number; failed: number };
    signInAfter: SignInOutcome;
    oldCookiesRead: number;
    oldCookies: number;
  }> => {
    const traffic = await loadFor(fleet, load);
    const loadSessions = fleet.loadSessions as LoadSession[];
    await sleep(1000);
    const pidsBefore = fleet.instances.map((i) => i.pid);
    const stopAt = Date.now();
    await fleet.postgres.stop();
    const stoppedAt = Date.now();
    const down: { name: string; ready: number; live: number; alive: boolean; at: number }[] = [];
    // At least five rounds of probes, however long a busy machine takes over each.
    while (Date.now() - stoppedAt < downMs || down.length < 5 * fleet.instances.length) {
      down.push(...(await probeAll(fleet)).map((p) => ({ ...p, at: Date.now() })));
      await sleep(100);
    }
    const startAt = Date.now();
    await fleet.postgres.start();
    const startedAt = Date.now();
    let recoveredAt: number | undefined;
    while (recoveredAt === undefined && Date.now() - startedAt < 20_000) {
      const probes = await probeAll(fleet);
      if (probes.every((p) => p.ready === 200)) recoveredAt = Date.now();
      else await sleep(50);
    }
    await sleep(tailMs);
    // Enough requests after recovery to tell that none fails: on a busy machine the load is
    // slower, so this waits up to 10 s more until more than 20 have started.
    for (let waited = 0; recoveredAt !== undefined && waited < 10_000; waited += 100) {
      const since = recoveredAt;
      if (traffic.records.filter((r) => r.start >= since).length > 20) break;
      await sleep(100);
    }
    const summary = await traffic.stop();
    const firstSuccess = summary.records.find(
      (r) => r.ok && r.kind === 'session' && r.start >= startAt,
    );
    const downWindow = summary.records.filter((r) => r.start >= stopAt && r.start < startedAt);
    const afterRecovery = summarise(
      summary.records.filter((r) => recoveredAt !== undefined && r.start >= recoveredAt),
    );
    const signInAfter = (await new Client(fleet.origin).signIn(loadSignerEmail, loadPassword))
      .outcome;
    let oldCookiesRead = 0;
    for (const session of loadSessions) {
      const client = new Client(fleet.origin, new Map([[sessionCookieName, session.cookie]]));
      if ((await client.sessionEmail()).email === session.email) oldCookiesRead += 1;
    }
    return {
      stopMs: stoppedAt - stopAt,
      downMs: startedAt - stopAt,
      startMs: startedAt - startAt,
      // From the moment PostgreSQL was told to start.
      recoverMs: recoveredAt === undefined ? undefined : recoveredAt - startAt,
      firstSuccessMs: firstSuccess === undefined ? undefined : firstSuccess.end - startAt,
      probesWhileDown: down.length,
      readiness503WhileDown: down.filter((p) => p.ready === 503).length,
      readinessOtherWhileDown: down.filter((p) => p.ready !== 503),
      livenessNot200WhileDown: down.filter((p) => p.live !== 200).length,
      exitedWhileDown: down.filter((p) => !p.alive).length,
      sameProcesses: fleet.instances.every((i, n) => i.pid === pidsBefore[n] && i.alive()),
      load: { total: summary.total, failed: summary.failed },
      loadWhileDown: { total: downWindow.length, failed: downWindow.filter((r) => !r.ok).length },
      loadStatusesWhileDown: countBy(downWindow.filter((r) => !r.ok).map((r) => r.status)),
      afterRecovery: { total: afterRecovery.total, failed: afterRecovery.failed },
      signInAfter,
      oldCookiesRead,
      oldCookies: loadSessions.length,
    };
  },
  (r) => [
    ...(r.probesWhileDown > 0 ? [] : ['no probe while PostgreSQL was down']),
    ...(r.readinessOtherWhileDown.length === 0
      ? []
      : [
          `readiness was not 503 while PostgreSQL was down: ${JSON.stringify(r.readinessOtherWhileDown[0])}`,
        ]),
    ...(r.livenessNot200WhileDown === 0
      ? []
      : [`liveness failed ${r.livenessNot200WhileDown} times while down`]),
    ...(r.exitedWhileDown === 0 && r.sameProcesses ? [] : ['an instance exited or was replaced']),
    ...(r.recoverMs !== undefined ? [] : ['readiness never came back']),
    ...(r.afterRecovery.total > 0 && r.afterRecovery.failed === 0
      ? []
      : [`after recovery ${r.afterRecovery.failed} of ${r.afterRecovery.total} requests failed`]),
    ...(r.signInAfter === 'signed-in' ? [] : [`sign-in after recovery: ${r.signInAfter}`]),
    ...(r.oldCookiesRead === r.oldCookies
      ? []
      : [`${r.oldCookies - r.oldCookiesRead} old cookies no longer read`]),
  ],
);

function countBy(values: readonly (string | number)[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}
