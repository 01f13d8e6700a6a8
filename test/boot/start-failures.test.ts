// A start that cannot succeed stops with exit 1 and one line on stderr naming the variable to
// change and how: no errno text, no stack trace, no password. Black-box: the built service
// and CLI, spawned with a bad environment.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/processes.js';
import { createTestDatabase, describeIfPostgres, testPostgresUrl } from '../helpers/postgres.js';
import { distDir, runNode, type Finished } from '../helpers/spawn.js';

const secret = 'q3V8rT0k5Zx1Lw9PmB2nY7cJ4hD6fGsA+E/uKiRoWt';
const failed = (message: string) => `gatehouse: failed to start: ${message}\n`;
const isRoot = process.getuid?.() === 0;
/** The user the permission cases run as: root passes every permission check. */
const otherUid = 65534;

/**
 * Whether another user can reach the built service and its node_modules: every folder above the
 * checkout must let others pass (x). A checkout under `mktemp -d` (0700) does not; there the
 * other-user cases cannot run, and say so, since lending the folder o+x would change the host.
 */
function othersCanReach(target: string): boolean {
  for (let at = path.resolve(target); ; at = path.dirname(at)) {
    if ((fs.statSync(at).mode & 0o001) === 0) return false;
    if (path.dirname(at) === at) return true;
  }
}
const otherUserCannotReach =
  isRoot && !othersCanReach(path.dirname(distDir))
    ? `uid ${otherUid} cannot enter a folder above ${path.dirname(distDir)}: clone into a folder others may pass through to run these`
    : undefined;
if (otherUserCannotReach !== undefined)
  process.stderr.write(`start-failures: skipping the other-user cases: ${otherUserCannotReach}\n`);

let dir: string;
/** A copy of this Node that the other user may run (Node 24 often lives under /root). */
let otherNode: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-start-failures-'));
  // Traversable by the other user; what it must not reach is made so case by case.
  fs.chmodSync(dir, 0o755);
  otherNode = process.execPath;
  if (isRoot) {
    const bin = path.join(dir, 'node-bin');
    fs.mkdirSync(bin, { mode: 0o755 });
    otherNode = path.join(bin, 'node');
    fs.copyFileSync(process.execPath, otherNode);
    fs.chmodSync(otherNode, 0o755);
  }
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Runs a built entry point as a user that is not root (as this one when it is not root). */
function runAsOtherUser(script: string, args: string[], env: Record<string, string>) {
  return new Promise<Finished>((resolve, reject) => {
    const child = spawn(otherNode, [path.join(distDir, script), ...args], {
      env: { PATH: '/usr/bin:/bin', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      cwd: dir,
      ...(isRoot && { uid: otherUid, gid: otherUid }),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
const otherUser = isRoot ? `this user (uid ${otherUid})` : `this user (uid ${process.getuid?.()})`;

/** A folder the other user cannot enter. */
function lockedFolder(name: string): string {
  const folder = path.join(dir, name);
  fs.mkdirSync(folder, { mode: isRoot ? 0o700 : 0o000 });
  fs.chmodSync(folder, isRoot ? 0o700 : 0o000);
  return folder;
}

const service = (env: Record<string, string>) =>
  runNode('gatehouse.mjs', [], { HOST: '127.0.0.1', DATA_DIR: path.join(dir, 'data'), ...env });

function expectNoInternals(result: Finished) {
  expect(result.stderr).not.toMatch(/\n\s+at |ECONNREFUSED|EADDRINUSE|EACCES|Error:/);
}

describe('a start that cannot succeed says which variable to change', () => {
  it('an unreachable PostgreSQL: host and port, never the password', async () => {
    const port = await freePort();
    const result = await service({
      AUTH_SECRET: secret,
      DATABASE_URL: `postgresql://gatehouse:pw-not-shown@127.0.0.1:${port}/gatehouse?sslmode=disable`,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      failed(
        `DATABASE_URL: cannot reach PostgreSQL at 127.0.0.1:${port} (connection refused); check the host/port or that the server is running`,
      ),
    );
    expectNoInternals(result);
  });

  it('a PostgreSQL port that accepts but never answers: no answer within 3 s', async () => {
    const silent = net.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as net.AddressInfo).port;
    try {
      const result = await service({
        AUTH_SECRET: secret,
        DATABASE_URL: `postgres://gatehouse@127.0.0.1:${port}/gatehouse`,
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        failed(
          `DATABASE_URL: cannot reach PostgreSQL at 127.0.0.1:${port} (no answer within 3 s); check the host/port and any firewall between`,
        ),
      );
    } finally {
      silent.close();
    }
  }, 20_000);

  it('a missing folder for an explicit file: DATABASE_URL is refused, not made', async () => {
    const missing = path.join(dir, 'no-such-folder', 'deeper');
    const result = await service({
      AUTH_SECRET: secret,
      DATABASE_URL: `file:${missing}/gatehouse.db`,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      failed(
        `DATABASE_URL: the folder ${missing} does not exist; create it (mkdir -p ${missing}) or correct the path (Gatehouse makes a folder only for the default database in DATA_DIR)`,
      ),
    );
    expect(fs.existsSync(path.join(dir, 'no-such-folder'))).toBe(false);
  });

  it('a file that is not a SQLite database: named, not overwritten', async () => {
    const folder = path.join(dir, 'not-a-database');
    fs.mkdirSync(folder, { mode: 0o700 });
    const file = path.join(folder, 'gatehouse.db');
    const text = 'a text file where the database should be\n'.repeat(20);
    fs.writeFileSync(file, text, { mode: 0o600 });
    const result = await service({ AUTH_SECRET: secret, DATABASE_URL: `file:${file}` });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      failed(
        `DATABASE_URL: ${file} is not a SQLite database (file is not a database); point DATABASE_URL at the right file, or move this one away to start afresh`,
      ),
    );
    expect(fs.readFileSync(file, 'utf8')).toBe(text);
  });

  it('PORT in use: the port, the address and the fix', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const result = await service({ AUTH_SECRET: secret, PORT: String(port) });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        failed(`PORT ${port} on 127.0.0.1 is in use; stop the other process or set PORT`),
      );
    } finally {
      blocker.close();
    }
  });

  it('METRICS_PORT in use: named as METRICS_PORT', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const result = await service({
        AUTH_SECRET: secret,
        PORT: String(await freePort()),
        METRICS_PORT: String(port),
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        failed(
          `METRICS_PORT ${port} on 127.0.0.1 is in use; stop the other process or set METRICS_PORT`,
        ),
      );
    } finally {
      blocker.close();
    }
  });

  it('HOST that is not an address of this machine', async () => {
    // TEST-NET-1 (RFC 5737): never assigned to a machine.
    const result = await service({
      AUTH_SECRET: secret,
      HOST: '192.0.2.123',
      PORT: String(await freePort()),
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      failed(
        'HOST 192.0.2.123 is not an address of this machine; set HOST (e.g. HOST=0.0.0.0 for every interface)',
      ),
    );
  });

  it('a plain-http AUTH_URL in production: refused, saying why and how to allow it', async () => {
    const result = await service({
      NODE_ENV: 'production',
      AUTH_SECRET: secret,
      AUTH_URL: 'http://auth.example.com',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'gatehouse: invalid configuration\n  - AUTH_URL: is plain http in production (http://auth.example.com): session cookies would be sent without Secure and passwords in clear text; use https:// (TLS at your proxy), e.g. AUTH_URL=https://auth.example.com, or set AUTH_URL_ALLOW_HTTP=true if plain http is intended\n',
    );
  });

  it('SIGNUP=open in production without SMTP_URL: refused in one line naming both', async () => {
    const result = await service({
      NODE_ENV: 'production',
      AUTH_SECRET: secret,
      AUTH_URL: 'https://auth.example.com',
      SIGNUP: 'open',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      failed(
        'SIGNUP=open needs mail, and SMTP_URL is not set: a sign-up is confirmed by a mailed link. Set SMTP_URL (and MAIL_FROM), e.g. SMTP_URL=smtps://user:password@smtp.example.com:465, or leave SIGNUP=closed',
      ),
    );
  });

  it('EMAIL_SIGNIN=on in production without mail: refused, saying what to set', async () => {
    const production = { NODE_ENV: 'production', AUTH_SECRET: secret, EMAIL_SIGNIN: 'on' };
    const noSmtp = await service({ ...production, AUTH_URL: 'https://auth.example.com' });
    expect(noSmtp.code).toBe(1);
    expect(noSmtp.stderr).toBe(
      failed(
        'EMAIL_SIGNIN=on needs mail, and SMTP_URL is not set: its link and code come by mail. Set SMTP_URL (and MAIL_FROM), e.g. SMTP_URL=smtps://user:password@smtp.example.com:465, or set EMAIL_SIGNIN=off',
      ),
    );
    const noAuthUrl = await service({
      ...production,
      AUTH_TRUST_HOST: 'true',
      SMTP_URL: 'smtp://127.0.0.1:2525',
      MAIL_FROM: 'no-reply@example.com',
    });
    expect(noAuthUrl.code).toBe(1);
    expect(noAuthUrl.stderr).toBe(
      failed(
        'EMAIL_SIGNIN=on needs mail, and production mails links only on AUTH_URL, which is not set. Set AUTH_URL to the public origin, e.g. AUTH_URL=https://auth.example.com, or set EMAIL_SIGNIN=off',
      ),
    );
  });

  it('bad values: each names its variable, what it takes and an example', async () => {
    const result = await service({
      PORT: 'abc',
      DATABASE_URL: 'mysql://db/gatehouse',
      AUTH_URL: 'auth.example.com',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      [
        'gatehouse: invalid configuration',
        '  - PORT: must be a whole number from 1 to 65535 (e.g. PORT=3000)',
        '  - DATABASE_URL: must start with postgresql:// or postgres:// (PostgreSQL), or file: (a SQLite file such as file:./data/gatehouse.db) (e.g. DATABASE_URL=postgresql://gatehouse:password@db:5432/gatehouse)',
        '  - AUTH_URL: must be the public origin as a full URL starting with https:// (or http://) (e.g. AUTH_URL=https://auth.example.com)',
        '',
      ].join('\n'),
    );
  });

  describe.skipIf(otherUserCannotReach !== undefined)(
    `files the service cannot use (run as ${isRoot ? `uid ${otherUid}` : 'this user'})`,
    () => {
      it('an unwritable DATA_DIR: named, with the path and the user', async () => {
        const locked = lockedFolder('locked-data');
        const result = await runAsOtherUser('gatehouse.mjs', [], {
          AUTH_SECRET: secret,
          DATA_DIR: path.join(locked, 'data'),
          PORT: String(await freePort()),
        });
        expect(result.code).toBe(1);
        expect(result.stderr).toBe(
          failed(
            `DATA_DIR: cannot open ${locked}/data/gatehouse.db (permission denied); make it writable by ${otherUser}, or set DATA_DIR to a writable place`,
          ),
        );
      });

      it('an unwritable file: DATABASE_URL: named as DATABASE_URL', async () => {
        const locked = lockedFolder('locked-url');
        const result = await runAsOtherUser('gatehouse.mjs', [], {
          AUTH_SECRET: secret,
          DATABASE_URL: `file:${locked}/gatehouse.db`,
          PORT: String(await freePort()),
        });
        expect(result.code).toBe(1);
        expect(result.stderr).toBe(
          failed(
            `DATABASE_URL: cannot open ${locked}/gatehouse.db (permission denied); make it writable by ${otherUser}, or set DATABASE_URL to a writable place`,
          ),
        );
      });

      it('a writable database file in a folder SQLite cannot write (its -wal): the user to fix', async () => {
        const folder = path.join(dir, 'read-only-folder');
        fs.mkdirSync(folder, { mode: 0o755 });
        const file = path.join(folder, 'gatehouse.db');
        fs.writeFileSync(file, '', { mode: 0o600 });
        if (isRoot) fs.chownSync(file, otherUid, otherUid);
        // Not root: the folder is ours, so take its write bit away instead.
        fs.chmodSync(folder, 0o555);
        const result = await runAsOtherUser('gatehouse.mjs', [], {
          AUTH_SECRET: secret,
          DATABASE_URL: `file:${file}`,
          PORT: String(await freePort()),
        });
        fs.chmodSync(folder, 0o755);
        expect(result.code).toBe(1);
        expect(result.stderr).toBe(
          failed(
            `DATABASE_URL: SQLite cannot use ${file} (attempt to write a readonly database); check that the file and its folder are writable by ${otherUser}`,
          ),
        );
      });

      it('an unreadable development secret: DATA_DIR, the file, or set AUTH_SECRET', async () => {
        const dataDir = path.join(dir, 'unreadable-dev-secret');
        fs.mkdirSync(dataDir, { mode: 0o755 });
        fs.chmodSync(dataDir, 0o755);
        const file = path.join(dataDir, 'auth-secret');
        fs.writeFileSync(file, `${secret}\n`);
        fs.chmodSync(file, isRoot ? 0o600 : 0o000);
        const result = await runAsOtherUser('gatehouse.mjs', [], {
          DATA_DIR: dataDir,
          PORT: String(await freePort()),
        });
        expect(result.code).toBe(1);
        expect(result.stderr).toBe(
          failed(
            `DATA_DIR: cannot read the development secret ${file} (permission denied); make it readable by ${otherUser}, or set AUTH_SECRET (or AUTH_SECRET_FILE)`,
          ),
        );
      });

      it('an unreadable AUTH_SECRET_FILE: the variable, the path and the user', async () => {
        const file = path.join(dir, 'unreadable-secret-file');
        fs.writeFileSync(file, `${secret}\n`);
        fs.chmodSync(file, isRoot ? 0o600 : 0o000);
        const result = await runAsOtherUser('gatehouse.mjs', [], {
          AUTH_SECRET_FILE: file,
          DATA_DIR: path.join(dir, 'data'),
        });
        const uid = isRoot ? otherUid : process.getuid?.();
        expect(result.code).toBe(1);
        expect(result.stderr).toBe(
          `gatehouse: invalid configuration\n  - AUTH_SECRET_FILE: cannot read ${file} (permission denied; make it readable by uid ${uid}, the user Gatehouse runs as)\n`,
        );
      });
    },
  );

  describeIfPostgres('PostgreSQL that answers but refuses', () => {
    const base = () => new URL(testPostgresUrl as string);

    it('an unknown role: the server and PostgreSQL own reason, never the password', async () => {
      const url = base();
      url.username = 'no_such_role';
      url.password = 'pw-not-shown';
      const result = await service({ AUTH_SECRET: secret, DATABASE_URL: url.toString() });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        failed(
          `DATABASE_URL: PostgreSQL at ${url.hostname}:${url.port} refused the login (role "no_such_role" does not exist); check the user name and password in DATABASE_URL`,
        ),
      );
      expect(result.stderr).not.toContain('pw-not-shown');
    });

    it('a database that does not exist: its name and how to make it', async () => {
      const url = base();
      url.pathname = '/no_such_database';
      const result = await service({ AUTH_SECRET: secret, DATABASE_URL: url.toString() });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        failed(
          `DATABASE_URL: PostgreSQL at ${url.hostname}:${url.port} has no database "no_such_database"; create it (createdb no_such_database) or correct the name in DATABASE_URL`,
        ),
      );
    });

    it('the users CLI says the same', async () => {
      const database = await createTestDatabase();
      try {
        const url = new URL(database.url);
        url.username = 'no_such_role';
        const result = await runNode('gatehouse-cli.cjs', ['users', 'list'], {
          DATABASE_URL: url.toString(),
        });
        expect(result.code).toBe(1);
        expect(result.stderr).toBe(
          `gatehouse: DATABASE_URL: PostgreSQL at ${url.hostname}:${url.port} refused the login (role "no_such_role" does not exist); check the user name and password in DATABASE_URL\n`,
        );
      } finally {
        await database.drop();
      }
    });
  });

  describe('the users CLI', () => {
    it('names an unreachable PostgreSQL as the service does', async () => {
      const port = await freePort();
      const result = await runNode('gatehouse-cli.cjs', ['users', 'list'], {
        DATABASE_URL: `postgres://gatehouse:pw-not-shown@127.0.0.1:${port}/gatehouse`,
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `gatehouse: DATABASE_URL: cannot reach PostgreSQL at 127.0.0.1:${port} (connection refused); check the host/port or that the server is running\n`,
      );
    });

    it('refuses a missing folder for an explicit DATABASE_URL instead of making it', async () => {
      const missing = path.join(dir, 'cli-no-such-folder');
      const result = await runNode('gatehouse-cli.cjs', ['users', 'list'], {
        DATABASE_URL: `file:${missing}/gatehouse.db`,
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`DATABASE_URL: the folder ${missing} does not exist`);
      expect(fs.existsSync(missing)).toBe(false);
    });
  });
});
