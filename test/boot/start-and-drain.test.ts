import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../helpers/client.js';
import { freePort, untilOutput } from '../helpers/processes.js';
import { distDir, runNode } from '../helpers/spawn.js';

interface Running {
  url: string;
  stderr: () => string;
  stdout: () => string;
  exited: Promise<number | null>;
  kill(signal: NodeJS.Signals): void;
}

/** Starts the built service on a free port and waits for its first 200 from /api/health. */
async function startService(
  env: Record<string, string>,
  entry = path.join(distDir, 'gatehouse.mjs'),
): Promise<Running> {
  // The kernel's pick: a random one could be in use (the fleet suite binds ports 20000-32767).
  const port = await freePort();
  const child = spawn(process.execPath, [entry], {
    env: { PATH: process.env.PATH ?? '', PORT: String(port), HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const url = `http://127.0.0.1:${port}`;
  // A deadline, not a count of tries: a start on a loaded machine may take many seconds.
  for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
    try {
      if ((await fetch(`${url}/api/health`)).status === 200) break;
    } catch {
      // Not listening yet: poll again.
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  return { url, stderr: () => stderr, stdout: () => stdout, exited, kill: (s) => child.kill(s) };
}

/** A data folder whose database already holds one user, added through the real CLI. */
async function dataDirWithUser(folder: string, email: string): Promise<string> {
  const dataDir = path.join(dir, folder);
  const add = await runNode(
    'gatehouse-cli.cjs',
    ['users', 'add', '--email', email, '--password-stdin'],
    { DATA_DIR: dataDir },
    'a long and fine password',
  );
  expect(add.code).toBe(0);
  return dataDir;
}

let dir: string;

describe('the service process', () => {
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-start-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it.each([
    [{ NODE_ENV: 'production' }, 'AUTH_SECRET: is required in production'],
    [
      { NODE_ENV: 'production', AUTH_SECRET: 'too-short' },
      'AUTH_SECRET: each comma-separated secret must be at least 32 bytes',
    ],
    [
      { NODE_ENV: 'production', AUTH_SECRET: 'x'.repeat(40), AUTH_URL: 'https://a.example' },
      'AUTH_SECRET: is too weak for production',
    ],
    [
      { NODE_ENV: 'production', AUTH_SECRET: 'q3V8rT0k5Zx1Lw9PmB2nY7cJ4hD6fGsA+E/uKiRoWt' },
      'AUTH_URL: is required in production',
    ],
    [{ PORT: 'http' }, 'PORT:'],
  ])('refuses to start with %j and names the variable', async (env, message) => {
    const result = await runNode('gatehouse.mjs', [], { DATA_DIR: dir, ...env });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('gatehouse: invalid configuration');
    expect(result.stderr).toContain(message);
  });

  it('in development makes a secret once, keeps it in the data folder, and says how to add a user', async () => {
    const dataDir = path.join(dir, 'dev');
    const service = await startService({ DATA_DIR: dataDir, LOG_LEVEL: 'info' });
    expect((await fetch(`${service.url}/api/health`)).status).toBe(200);
    expect(service.stderr()).toContain('AUTH_SECRET is not set; using a new development secret');
    const secretFile = path.join(dataDir, 'auth-secret');
    expect(fs.statSync(secretFile).mode & 0o777).toBe(0o600);
    expect(fs.existsSync(path.join(dataDir, 'gatehouse.db'))).toBe(true);
    // pino writes asynchronously: the line may land just after the first answer.
    await untilOutput(service.stdout, 'no users yet');
    const secret = fs.readFileSync(secretFile, 'utf8');
    service.kill('SIGTERM');
    expect(await service.exited).toBe(0);

    const again = await startService({ DATA_DIR: dataDir });
    expect(again.stderr()).toContain('using the development secret');
    expect(fs.readFileSync(secretFile, 'utf8')).toBe(secret);
    again.kill('SIGINT');
    expect(await again.exited).toBe(0);
  });

  // The machines this runs on keep their own older Node beside the Node 24 the tests use.
  const olderNode = ['/usr/bin/node', '/usr/local/bin/node'].find((candidate) => {
    if (!fs.existsSync(candidate) || fs.realpathSync(candidate) === process.execPath) return false;
    const version = execFileSync(candidate, ['-p', 'process.versions.node'], { encoding: 'utf8' });
    return Number(version.split('.')[0]) < 24;
  });
  it.skipIf(olderNode === undefined)(
    'on an older Node.js the service and the CLI refuse to start and say what to install',
    async () => {
      for (const [entry, args] of [
        ['gatehouse.mjs', []],
        ['gatehouse-cli.cjs', ['users', 'list']],
      ] as const) {
        const child = spawn(olderNode as string, [path.join(distDir, entry), ...args], {
          env: { PATH: process.env.PATH ?? '', DATA_DIR: path.join(dir, 'old-node') },
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        let stderr = '';
        child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
        const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
        expect(code).toBe(1);
        expect(stderr).toMatch(
          /^gatehouse: Node\.js 24 LTS or later is required, this is 2[0-3]\./,
        );
      }
      expect(fs.existsSync(path.join(dir, 'old-node'))).toBe(false);
    },
  );

  it('starts past a corrupt code cache, replaces it once, then starts from the new one', async () => {
    // A copy of the built entry and bundle inside dist/, so node_modules still resolves.
    const copy = fs.mkdtempSync(path.join(distDir, '.code-cache-test-'));
    try {
      for (const file of ['gatehouse.mjs', 'gatehouse.cjs', 'argon2-worker.cjs'])
        fs.copyFileSync(path.join(distDir, file), path.join(copy, file));
      const cacheFile = path.join(copy, 'gatehouse.cjs.v8cache');
      const corrupt = Buffer.from('not a V8 code cache');
      fs.writeFileSync(cacheFile, corrupt);
      const env = { DATA_DIR: path.join(dir, 'code-cache'), AUTH_SECRET: 'x'.repeat(40) };
      const first = await startService(env, path.join(copy, 'gatehouse.mjs'));
      expect((await fetch(`${first.url}/api/health`)).status).toBe(200);
      // Written just after start-up completes, which may trail the first answer by seconds on
      // a loaded machine.
      await expect
        .poll(() => fs.readFileSync(cacheFile).equals(corrupt), { timeout: 20_000 })
        .toBe(false);
      first.kill('SIGTERM');
      expect(await first.exited).toBe(0);
      const written = fs.readFileSync(cacheFile);
      const writtenAt = fs.statSync(cacheFile).mtimeMs;
      expect(written.equals(corrupt)).toBe(false);
      expect(written.length).toBeGreaterThan(100_000);

      // Accepted this time, so left as it is.
      const second = await startService(env, path.join(copy, 'gatehouse.mjs'));
      expect((await fetch(`${second.url}/api/health`)).status).toBe(200);
      second.kill('SIGTERM');
      expect(await second.exited).toBe(0);
      expect(fs.statSync(cacheFile).mtimeMs).toBe(writtenAt);
      expect(fs.readFileSync(cacheFile).equals(written)).toBe(true);
      expect(fs.readdirSync(copy).sort()).toEqual([
        'argon2-worker.cjs',
        'gatehouse.cjs',
        'gatehouse.cjs.v8cache',
        'gatehouse.mjs',
      ]);
    } finally {
      fs.rmSync(copy, { recursive: true, force: true });
    }
  });

  it('on SIGTERM finishes in-flight requests, refuses new work, and exits 0', async () => {
    const dataDir = await dataDirWithUser('drain', 'd@example.com');
    const service = await startService({
      DATA_DIR: dataDir,
      AUTH_SECRET: 'x'.repeat(40),
      LOG_LEVEL: 'debug',
    });
    // Sign-ins in flight (argon2 keeps each busy) when the signal arrives.
    const csrf = await fetch(`${service.url}/api/auth/csrf`);
    const { csrfToken } = (await csrf.json()) as { csrfToken: string };
    const cookie = csrf.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const inflight = Array.from({ length: 8 }, () =>
      fetch(`${service.url}/api/auth/callback/credentials`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          cookie,
          'x-auth-return-redirect': '1',
        },
        body: new URLSearchParams({
          csrfToken,
          email: 'd@example.com',
          password: 'a long and fine password',
        }).toString(),
      }),
    );
    // Signal only once all eight are inside the service (the log says so), so they are in flight.
    const received = () =>
      service
        .stdout()
        .split('\n')
        .filter(
          (line) => line.includes('"msg":"received"') && line.includes('callback/credentials'),
        ).length;
    await expect.poll(received, { timeout: 20_000, interval: 5 }).toBe(8);
    service.kill('SIGTERM');
    const responses = await Promise.all(inflight);
    expect(responses.map((r) => r.status)).toEqual(Array(8).fill(200));
    // New work after the signal is refused (a new connection) or, on a kept-alive connection,
    // still answered, and that connection is then closed.
    const late = await fetch(`${service.url}/api/health/ready`).then(
      (r) => `${r.status} ${r.headers.get('connection')}`,
      () => 'refused',
    );
    expect(['503 close', 'refused']).toContain(late);
    expect(await service.exited).toBe(0);
  }, 60_000);

  it('a SIGTERM the moment the port opens drains and exits 0, never dies by the signal', async () => {
    // An orchestrator may stop a replica as soon as it answers: the signal must find its
    // handler, however early. Three starts, each stopped at its first accepted connection.
    for (let round = 0; round < 3; round += 1) {
      const port = await freePort();
      const child = spawn(process.execPath, [path.join(distDir, 'gatehouse.mjs')], {
        env: {
          PATH: process.env.PATH ?? '',
          PORT: String(port),
          HOST: '127.0.0.1',
          DATA_DIR: path.join(dir, `early-stop-${round}`),
          AUTH_SECRET: 'x'.repeat(40),
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
      const opened = async () =>
        new Promise<boolean>((resolve) => {
          const socket = net.connect(port, '127.0.0.1');
          socket.once('connect', () => {
            socket.destroy();
            resolve(true);
          });
          socket.once('error', () => resolve(false));
        });
      for (const deadline = Date.now() + 30_000; Date.now() < deadline && !(await opened());)
        await new Promise((resolve) => setTimeout(resolve, 1));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  }, 60_000);

  it('on SIGTERM a connection that never sent a request does not hold the exit', async () => {
    // A browser's speculative pre-connect: Node's idle-connection close passes it over, and
    // its socket timeout here is two minutes.
    const service = await startService({
      DATA_DIR: path.join(dir, 'preconnect'),
      AUTH_SECRET: 'x'.repeat(40),
      REQUEST_TIMEOUT_MS: '60000',
    });
    const { port } = new URL(service.url);
    const preconnect = net.connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => preconnect.once('connect', resolve));
    const closedByServer = new Promise((resolve) => preconnect.once('close', resolve));
    service.kill('SIGTERM');
    const outcome = await Promise.race([
      service.exited,
      new Promise((resolve) => setTimeout(() => resolve('still draining after 10 s'), 10_000)),
    ]);
    expect(outcome).toBe(0);
    await closedByServer;
  }, 20_000);

  it('WORKERS=2 whose workers keep failing to start backs off, then exits 1 with the cause', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    const started = Date.now();
    try {
      const result = await runNode('gatehouse.mjs', [], {
        DATA_DIR: path.join(dir, 'failing-workers'),
        AUTH_SECRET: 'x'.repeat(40),
        WORKERS: '2',
        HOST: '127.0.0.1',
        PORT: String(port),
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(
        `gatehouse: failed to start: PORT ${port} on 127.0.0.1 is in use; stop the other process or set PORT\n`,
      );
      expect(result.stderr).toMatch(/restarting in \d+ ms/);
      expect(result.stderr).toContain('times in a row within 10 s of starting');
      // Backed off (0.25 + 0.5 + 1 + 2 s at least), yet gave up: forking forever, its back-off
      // doubling to 30 s, it would not have exited at all. The bound only catches that: five
      // worker starts on a loaded machine may take many seconds.
      expect(Date.now() - started).toBeGreaterThan(1500);
      expect(Date.now() - started).toBeLessThan(60_000);
    } finally {
      blocker.close();
    }
  }, 90_000);

  it('WORKERS=2 serves from two processes that share sessions, and stops cleanly', async () => {
    const dataDir = await dataDirWithUser('cluster', 'c@example.com');
    const service = await startService({ DATA_DIR: dataDir, WORKERS: '2', LOG_LEVEL: 'info' });
    const client = new Client(service.url);
    await client.signIn('c@example.com', 'a long and fine password');
    // Each read on a new connection, which the primary hands to the listening workers in
    // turn: both must accept the cookie. The second worker may still be starting, so read
    // until both have answered (bounded).
    const servedBy = () =>
      new Set(
        service
          .stdout()
          .split('\n')
          // A chunk may end mid-line: only whole lines are read.
          .filter(
            (line) =>
              line.endsWith('}') &&
              line.includes('"msg":"request"') &&
              line.includes('/api/auth/session'),
          )
          .map((line) => (JSON.parse(line) as { pid: number }).pid),
      );
    for (const deadline = Date.now() + 30_000; servedBy().size < 2 && Date.now() < deadline;) {
      const body = await new Promise<string>((resolve, reject) => {
        http
          .get(
            `${service.url}/api/auth/session`,
            { agent: false, headers: { cookie: client.cookieHeader() } },
            (response) => {
              let text = '';
              response.on('data', (chunk: Buffer) => (text += chunk.toString()));
              response.on('end', () => resolve(text));
            },
          )
          .on('error', reject);
      });
      expect(JSON.parse(body)).toMatchObject({ user: { email: 'c@example.com' } });
      await new Promise((r) => setTimeout(r, 50));
    }
    const pids = servedBy();
    expect(pids.size).toBe(2);
    service.kill('SIGTERM');
    expect(await service.exited).toBe(0);
  }, 60_000);
});
