// A throw-away PostgreSQL for the fleet, as scripts/with-postgres.sh makes one (Debian's
// binaries, trust auth, fsync off, 127.0.0.1 only), but with a lifecycle the scenarios drive:
// stop (fast) and start again on the same port and data. As root the server runs as the
// `postgres` OS user (initdb refuses root): spawned with its uid and gid, so the child's PID is
// the postmaster's own and stopping it needs no pg_ctl.
//
// Not test/helpers/postgres.ts: that one uses the server scripts/with-postgres.sh started, which
// a scenario must not stop.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { freePort, signalAndWait, sleep, track, type Tracked } from './processes.ts';

export interface Postgres {
  /** postgres:// URL of the `gatehouse` database. */
  readonly url: string;
  readonly port: number;
  readonly pid: number | undefined;
  /** Fast shutdown; resolves once the postmaster has exited. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data; resolves once it answers. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** The newest Debian server binaries (`/usr/lib/postgresql/<n>/bin`), or undefined. */
export function postgresBinDir(): string | undefined {
  let dirs: string[] = [];
  try {
    dirs = fs.readdirSync('/usr/lib/postgresql').sort((a, b) => Number(a) - Number(b));
  } catch {
    return undefined;
  }
  return dirs
    .map((version) => path.join('/usr/lib/postgresql', version, 'bin'))
    .filter((dir) => ['initdb', 'postgres'].every((bin) => fs.existsSync(path.join(dir, bin))))
    .at(-1);
}

function serverUser(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string) =>
    Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    throw new Error("running as root needs the 'postgres' OS user (apt-get install postgresql)");
  }
}

async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Initialises a cluster in `dir` (which it owns from then on) and starts it on a free loopback
 * port with a `gatehouse` database. `url` names that database; `stop()` is a fast shutdown,
 * `start()` starts it again on the same port and data, `close()` stops it for good.
 */
export async function startPostgres(dir: string): Promise<Postgres> {
  const bin = postgresBinDir();
  if (bin === undefined)
    throw new Error('PostgreSQL is not installed (apt-get install postgresql)');
  const user = serverUser();
  const data = path.join(dir, 'data');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (user.uid !== undefined && user.gid !== undefined) fs.chownSync(dir, user.uid, user.gid);
  // cwd: a folder the server user may read, or initdb and postgres complain.
  const options = { ...user, cwd: dir, env: { PATH: process.env.PATH, LANG: 'C' } };
  execFileSync(
    path.join(bin, 'initdb'),
    ['-D', data, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-sync'],
    { ...options, stdio: 'pipe' },
  );

  const port = await freePort();
  const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const url = `postgres://postgres@127.0.0.1:${port}/gatehouse`;
  let server: Tracked | undefined;

  const running = (): Tracked => {
    if (server === undefined) throw new Error('PostgreSQL was never started');
    return server;
  };

  const start = async (): Promise<void> => {
    const child = spawn(
      path.join(bin, 'postgres'),
      [
        ...['-D', data, '-k', dir, '-p', String(port)],
        ...['-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'synchronous_commit=off'],
        ...['-c', 'full_page_writes=off', '-c', 'max_connections=100'],
      ],
      { ...options, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    // SIGINT is PostgreSQL's fast shutdown: sessions end, transactions roll back, a clean stop.
    const entry: Tracked = track(child, 'postgres', {
      stop: () => signalAndWait(child, entry.exited, 10_000, 'SIGINT'),
    });
    server = entry;
    const deadline = Date.now() + 20_000;
    while (!(await answers(adminUrl))) {
      if (!entry.alive() || Date.now() > deadline) {
        await entry.stop();
        throw new Error(`PostgreSQL did not start:\n${entry.output()}`);
      }
      await sleep(50);
    }
  };

  await start();
  const admin = new pg.Client({ connectionString: adminUrl });
  admin.on('error', () => undefined);
  await admin.connect();
  try {
    await admin.query('create database gatehouse');
  } finally {
    await admin.end();
  }

  return {
    url,
    port,
    get pid() {
      return server?.pid;
    },
    /** A fast shutdown (SIGINT); resolves once the postmaster has exited. */
    async stop() {
      const { child, exited, output } = running();
      const { code } = await signalAndWait(child, exited, 10_000, 'SIGINT');
      if (code !== 0) throw new Error(`PostgreSQL exited with ${code}:\n${output()}`);
    },
    start,
    close: () => running().stop(),
  };
}
