// compose.yaml as shipped (on the host's network): PostgreSQL and Gatehouse with secrets from
// files, the users CLI through `compose exec`, a restart, and a PostgreSQL outage.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect } from 'vitest';
import { writeHostNetworkCompose } from './compose-host-network.ts';
import {
  check,
  cleanups,
  docker,
  emailOf,
  image,
  password,
  port,
  readSession,
  run,
  sh,
  signIn,
  waitHealthy,
  waitStatus,
} from './containers.ts';

const root = path.resolve(import.meta.dirname, '../..');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-containers-'));
const composeDir = path.join(work, 'compose');
const composeProject = `${run}c`;
const composePort = port();
const composePgPort = port();
const composeBase = `http://127.0.0.1:${composePort}`;
const compose = (...args: string[]) =>
  sh(
    'docker-compose',
    ['-p', composeProject, '-f', path.join(composeDir, 'compose.yaml'), ...args],
    {
      env: { GATEHOUSE_IMAGE: image, AUTH_URL: composeBase },
    },
  );
const started = cleanups();
started.add(() => compose('down', '-v', '--timeout', '5'));
afterAll(async () => {
  await started.run();
  fs.rmSync(work, { recursive: true, force: true });
}, 120_000);

function writeSecrets(dir: string, pgPort: number): void {
  fs.mkdirSync(path.join(dir, 'secrets'), { recursive: true });
  const pgPassword = randomBytes(18).toString('hex');
  const files = {
    auth_secret: randomBytes(33).toString('base64'),
    postgres_password: pgPassword,
    database_url: `postgres://gatehouse:${pgPassword}@127.0.0.1:${pgPort}/gatehouse`,
  };
  for (const [name, value] of Object.entries(files)) {
    fs.writeFileSync(path.join(dir, 'secrets', name), `${value}\n`, { mode: 0o644 });
  }
}

async function composeContainer(service: string): Promise<string> {
  return (await compose('ps', '-q', service)).stdout;
}

check('compose: PostgreSQL and Gatehouse both turn healthy (secrets from files)', async () => {
  fs.mkdirSync(composeDir, { recursive: true });
  writeSecrets(composeDir, composePgPort);
  writeHostNetworkCompose(path.join(root, 'compose.yaml'), path.join(composeDir, 'compose.yaml'), {
    postgres: {
      PGPORT: String(composePgPort),
      '@command': ['postgres', '-c', 'listen_addresses=127.0.0.1'],
    },
    gatehouse: { HOST: '127.0.0.1', PORT: String(composePort) },
  });
  const started = Date.now();
  await compose('up', '-d');
  await waitHealthy(await composeContainer('postgres'));
  await waitHealthy(await composeContainer('gatehouse'));
  return `both healthy ${((Date.now() - started) / 1000).toFixed(1)} s after up`;
});

let composeSession: string | undefined;
check(
  'compose: a user added with `compose exec gatehouse gatehouse users add` signs in',
  async () => {
    await sh(
      'docker-compose',
      [
        '-p',
        composeProject,
        '-f',
        path.join(composeDir, 'compose.yaml'),
        'exec',
        '-T',
        'gatehouse',
        'gatehouse',
        'users',
        'add',
        '--email',
        'grace@example.com',
        '--password-stdin',
      ],
      { input: `${password}\n`, env: { GATEHOUSE_IMAGE: image } },
    );
    composeSession = (await signIn(composeBase, 'grace@example.com')).session;
    const body = await readSession(composeBase, composeSession);
    expect(emailOf(body), `session: ${JSON.stringify(body)}`).toBe('grace@example.com');
  },
);

check('compose: a session made before `restart gatehouse` still reads after it', async () => {
  await compose('restart', 'gatehouse');
  await waitStatus(`${composeBase}/api/health/ready`, 200);
  const body = await readSession(composeBase, composeSession);
  expect(emailOf(body), `session after restart: ${JSON.stringify(body)}`).toBe('grace@example.com');
  const exitCode = (
    await docker(
      'inspect',
      '-f',
      '{{.RestartCount}} {{.State.Status}}',
      await composeContainer('gatehouse'),
    )
  ).stdout;
  return `gatehouse ${exitCode}`;
});

check(
  'compose: with PostgreSQL stopped, readiness 503 and liveness 200; back, readiness 200',
  async () => {
    await compose('stop', 'postgres');
    const down = await waitStatus(`${composeBase}/api/health/ready`, 503, 10_000);
    const live = await fetch(`${composeBase}/api/health`);
    expect(live.status, `liveness answered ${live.status} while PostgreSQL was down`).toBe(200);
    await compose('start', 'postgres');
    const back = await waitStatus(`${composeBase}/api/health/ready`, 200, 60_000);
    const body = await readSession(composeBase, composeSession);
    expect(emailOf(body), 'the session did not read after PostgreSQL came back').toBe(
      'grace@example.com',
    );
    return `503 after ${down.toFixed(1)} s, 200 again ${back.toFixed(1)} s after start`;
  },
);
