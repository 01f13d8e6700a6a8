import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './processes.js';

/** Debian's PgBouncer, when installed: the PgBouncer suites are skipped (and say so) without it. */
export const pgbouncerBinary = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find((file) =>
  fs.existsSync(file),
);

/**
 * Whether this PgBouncer knows `max_prepared_statements` (1.21 and later): there it is set to 0,
 * so every version keeps no prepared statements, as hosted poolers before 1.21 do. An older one
 * refuses the unknown setting.
 */
function knowsPreparedStatements(binary: string): boolean {
  const said = spawnSync(binary, ['--version'], { encoding: 'utf8' }).stdout ?? '';
  const [major = 0, minor = 0] = (/PgBouncer (\d+)\.(\d+)/.exec(said) ?? []).slice(1).map(Number);
  return major > 1 || (major === 1 && minor >= 21);
}

export interface PgBouncer {
  /** A postgres:// URL of `database` through PgBouncer. */
  url(database: string): string;
  stop(): Promise<void>;
}

/**
 * PgBouncer in front of the test PostgreSQL, as hosted offerings run it: transaction pooling and
 * otherwise its stock settings (no ignore_startup_parameters), keeping no prepared statements,
 * on loopback, config and logs in a temp folder, stopped by PID. As root it runs as the
 * `postgres` user: PgBouncer refuses to run as root.
 */
export async function startPgBouncer(postgresUrl: string): Promise<PgBouncer> {
  if (pgbouncerBinary === undefined) throw new Error('PgBouncer is not installed');
  const upstream = new URL(postgresUrl);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-pgbouncer-'));
  const port = await freePort();
  fs.writeFileSync(path.join(dir, 'userlist.txt'), `"${upstream.username}" ""\n`);
  fs.writeFileSync(
    path.join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${upstream.hostname} port=${upstream.port}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${path.join(dir, 'userlist.txt')}`,
      'pool_mode = transaction',
      ...(knowsPreparedStatements(pgbouncerBinary) ? ['max_prepared_statements = 0'] : []),
      `logfile = ${path.join(dir, 'pgbouncer.log')}`,
      '',
    ].join('\n'),
  );
  const asRoot = process.getuid?.() === 0;
  if (asRoot) fs.chmodSync(dir, 0o777);
  const command = asRoot
    ? ['runuser', '-u', 'postgres', '--', pgbouncerBinary, path.join(dir, 'pgbouncer.ini')]
    : [pgbouncerBinary, path.join(dir, 'pgbouncer.ini')];
  const child: ChildProcess = spawn(command[0] as string, command.slice(1), {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
  for (let i = 0; ; i += 1) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (open) break;
    if (i > 100 || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error(`PgBouncer did not start: ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url(database) {
      const url = new URL(postgresUrl);
      url.port = String(port);
      url.pathname = `/${database}`;
      return url.toString();
    },
    async stop() {
      child.kill('SIGTERM');
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
