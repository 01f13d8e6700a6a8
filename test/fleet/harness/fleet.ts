// A fleet on loopback: one throw-away PostgreSQL, N Gatehouse instances sharing it, nginx in
// front with least-connections balancing, and the readiness controller keeping nginx's
// upstream equal to the ready instances. Everything lives in one temp folder and is stopped
// by PID, on `stop()` and (through processes.ts) on any other exit path.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startController, type Controller } from './controller.ts';
import { request } from './http.ts';
import { startInstance, type Instance } from './instance.ts';
import type { LoadSession } from './load.ts';
import { nginxPath, startNginx, type FleetNginx } from './nginx.ts';
import { postgresBinDir, startPostgres, type Postgres } from './postgres.ts';
import { freePort, sleep, stopAll, trackTempDir } from './processes.ts';
import { addUser, runUsers, type CliResult } from './users-cli.ts';

export type { Instance };

export interface RestartStep {
  name: string;
  exitCode: number | string | null;
  oldPid: number | undefined;
  newPid: number | undefined;
  outMs: number;
  exitedMs: number;
  backMs: number;
}

export interface Fleet {
  readonly dir: string;
  /** nginx's origin, also the instances' AUTH_URL. */
  readonly origin: string;
  readonly postgres: Postgres;
  readonly nginx: FleetNginx;
  readonly controller: Controller;
  readonly env: Readonly<Record<string, string>>;
  /** The running instances, by index; a restart replaces its entry. */
  readonly instances: Instance[];
  /** The load generator's signed-in cookies, made on first use (load.ts). */
  loadSessions?: LoadSession[];
  users(args: string[], stdin?: string): Promise<CliResult>;
  addUser(email: string, password: string): Promise<CliResult>;
  /**
   * A rolling-restart step, as Kubernetes does it: out of the endpoints (nginx reloaded, no
   * old worker left), then SIGTERM, wait for the exit, start anew on the same port, back
   * in once ready.
   */
  restart(index: number): Promise<RestartStep>;
  /** SIGKILL, with no warning to nginx: the controller notices when readiness fails. Resolves to Date.now() at its exit. */
  kill(index: number): Promise<number>;
  /** Starts a stopped instance again on its port; resolves once nginx routes to it. */
  startAgain(index: number): Promise<Instance>;
  stop(): Promise<void>;
}

/** Why a fleet cannot run here, or undefined when it can (PostgreSQL and nginx installed). */
export function fleetUnavailable(): string | undefined {
  if (postgresBinDir() === undefined)
    return 'PostgreSQL is not installed (apt-get install postgresql)';
  if (!fs.existsSync(nginxPath)) return 'nginx is not installed (apt-get install nginx)';
  return undefined;
}

export const instanceNames = ['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H'];

/** Failures per email before the lock, in the fleet: small, so the throttle scenario hashes little. */
export const fleetEmailMaxFailures = 5;

async function waitReady(url: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await request(`${url}/api/health/ready`, { timeoutMs: 1500 })).status !== 200) {
    if (Date.now() > deadline) throw new Error(`${url} not ready within ${timeoutMs} ms`);
    await sleep(50);
  }
}

/**
 * Starts a fleet of `instances` (1 to 8). `env` overrides the instances' shared settings;
 * `keepalive` is nginx's idle upstream connections per worker (see nginx.ts).
 */
export async function startFleet({
  instances = 3,
  env = {},
  keepalive = 0,
  log = () => {},
}: {
  instances?: number;
  env?: Record<string, string>;
  keepalive?: number;
  log?: (line: string) => void;
} = {}): Promise<Fleet> {
  if (!(instances >= 1 && instances <= instanceNames.length)) {
    throw new Error(`a fleet has 1 to ${instanceNames.length} instances`);
  }
  const dir = trackTempDir(fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-fleet-')));
  // Traversable: PostgreSQL runs as `postgres` and nginx's workers as `nobody` under root.
  fs.chmodSync(dir, 0o755);
  try {
    const t0 = Date.now();
    const pg = await startPostgres(path.join(dir, 'postgres'));
    log(`PostgreSQL on ${pg.port} (${Date.now() - t0} ms)`);
    const nginxPort = await freePort();
    const ports: number[] = [];
    while (ports.length < instances) {
      const port = await freePort();
      if (port !== nginxPort && !ports.includes(port)) ports.push(port);
    }
    const sharedEnv = {
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      DATABASE_URL: pg.url,
      AUTH_SECRET: randomBytes(33).toString('base64'),
      // The public origin is nginx's: redirects and cookies are the same whichever instance answers.
      AUTH_URL: `http://127.0.0.1:${nginxPort}`,
      // nginx connects from 127.0.0.1; its X-Forwarded-For names the client.
      TRUST_PROXY: '127.0.0.1',
      LOG_LEVEL: 'warn',
      WORKERS: '1',
      THROTTLE_EMAIL_MAX_FAILURES: String(fleetEmailMaxFailures),
      // The load generator signs in from one address and one account all the time: the attempt
      // limits (not what the scenarios are about) would otherwise refuse it after 300 and 50.
      THROTTLE_EMAIL_MAX_ATTEMPTS: '1000000',
      THROTTLE_IP_MAX_ATTEMPTS: '1000000',
      // Sessions made early in a run are read again at its end ("nothing written is lost");
      // the per-user cap would otherwise end the oldest of the load's many sign-ins.
      SESSIONS_PER_USER_MAX: '100000',
      // Every load client is 127.0.0.1 too: the request budget would refuse the throughput runs.
      REQUEST_BUDGET_PER_SECOND: '0',
      ...env,
    };
    const names = instanceNames.slice(0, instances);
    const start = (index: number) =>
      startInstance({
        name: names[index] as string,
        port: ports[index] as number,
        env: sharedEnv,
      });
    // Started together on an empty database: migrations serialise under an advisory lock.
    const running = await Promise.all(names.map((_, index) => start(index)));
    await Promise.all(running.map((instance) => waitReady(instance.url)));
    log(`${instances} instance(s) ready on ${ports.join(', ')} (${Date.now() - t0} ms)`);
    const nginx = await startNginx({
      dir: path.join(dir, 'nginx'),
      port: nginxPort,
      upstreams: ports,
      keepalive,
    });
    const controller = startController({ nginx, ports });
    log(`nginx on ${nginxPort} (${Date.now() - t0} ms)`);

    let stopped = false;
    const fleet: Fleet = {
      dir,
      origin: nginx.origin,
      postgres: pg,
      nginx,
      controller,
      env: sharedEnv,
      instances: running,
      users: (args, stdin) => runUsers(pg.url, args, stdin),
      addUser: (email, password) => addUser(pg.url, email, password),

      async restart(index) {
        const old = running[index] as Instance;
        const t = Date.now();
        await controller.drain(old.port);
        const outMs = Date.now() - t;
        const exitCode = await old.terminate();
        const exitedMs = Date.now() - t;
        const fresh = await start(index);
        running[index] = fresh;
        await controller.admit(old.port);
        return {
          name: old.name,
          exitCode,
          oldPid: old.pid,
          newPid: fresh.pid,
          outMs,
          exitedMs,
          backMs: Date.now() - t,
        };
      },
      async kill(index) {
        return (running[index] as Instance).kill();
      },
      async startAgain(index) {
        const fresh = await start(index);
        running[index] = fresh;
        await controller.admit(fresh.port);
        return fresh;
      },
      async stop() {
        if (stopped) return;
        stopped = true;
        await controller.stop();
        await nginx.stop();
        await Promise.all(running.map((instance) => instance.stop()));
        await pg.close();
        await stopAll();
      },
    };
    return fleet;
  } catch (error) {
    await stopAll();
    throw error;
  }
}
