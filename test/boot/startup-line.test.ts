// What a start says about itself: one line naming the store, the public origin and the mode,
// and a warning for each variable that looks meant for Gatehouse but is not read. Black-box:
// the built service and CLI.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startServerProcess, type ServerProcess } from '../helpers/processes.js';
import { createTestDatabase, describeIfPostgres } from '../helpers/postgres.js';
import { distDir, runNode } from '../helpers/spawn.js';

const secret = 'q3V8rT0k5Zx1Lw9PmB2nY7cJ4hD6fGsA+E/uKiRoWt';
const production = { NODE_ENV: 'production', AUTH_SECRET: secret };

interface StartLine {
  msg: string;
  level: number;
  store: string;
  origin: string;
  mode: string;
  workers?: number;
  pid: number;
}

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-startup-line-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/**
 * Starts the built service and waits for its start-up line(s), and for `ready` of its output
 * when given; stops it afterwards.
 */
async function started(
  env: Record<string, string>,
  expectLines = 1,
  ready: (output: string) => boolean = () => true,
): Promise<{ lines: StartLine[]; output: string }> {
  const port = await freePort();
  const server: ServerProcess = await startServerProcess(
    process.execPath,
    [path.join(distDir, 'gatehouse.mjs')],
    { port, env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: String(port), ...env } },
  );
  const lines = () =>
    server
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{') && line.endsWith('}'))
      .map((line) => JSON.parse(line) as StartLine)
      .filter((line) => line.msg.startsWith('started in '));
  try {
    // pino writes asynchronously: the line may land just after the port accepts, or, on a
    // loaded machine, seconds after.
    const deadline = Date.now() + 20_000;
    while ((lines().length < expectLines || !ready(server.output())) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 10));
    // A second line would come from a second worker: give it the time to show.
    if (expectLines > 0) await new Promise((resolve) => setTimeout(resolve, 300));
    return { lines: lines(), output: server.output() };
  } finally {
    await server.stop();
  }
}

describe('the start-up line', () => {
  it('names the SQLite file as resolved, the origin taken from requests, and the mode', async () => {
    const dataDir = path.join(dir, 'dev');
    const { lines } = await started({ DATA_DIR: dataDir, AUTH_SECRET: secret });
    const file = path.resolve(dataDir, 'gatehouse.db');
    expect(lines).toEqual([
      expect.objectContaining({
        level: 30,
        store: `sqlite ${file}`,
        origin: "from each request's Host",
        mode: 'development',
        msg: `started in development mode: store sqlite ${file}, public origin from each request's Host`,
      }),
    ]);
    expect(lines[0]).not.toHaveProperty('workers');
  });

  it('a typo in DATABASE_URL in production: a warning, and the line shows the SQLite file used instead', async () => {
    const dataDir = path.join(dir, 'typo');
    const { lines, output } = await started({
      ...production,
      AUTH_URL: 'https://auth.example.com',
      DATA_DIR: dataDir,
      DATABSE_URL: 'postgres://gatehouse:pw-not-shown@db:5432/gatehouse',
    });
    expect(output).toContain(
      'gatehouse: warning: DATABSE_URL is set but Gatehouse does not read it; did you mean DATABASE_URL?\n',
    );
    expect(output).not.toContain('pw-not-shown');
    expect(lines.map((line) => line.msg)).toEqual([
      `started in production mode: store sqlite ${path.resolve(dataDir, 'gatehouse.db')}, public origin https://auth.example.com`,
    ]);
  });

  it('a plain-http AUTH_URL that production allows explicitly is shown as it is', async () => {
    const { lines } = await started({
      ...production,
      AUTH_URL: 'http://auth.internal:8080',
      AUTH_URL_ALLOW_HTTP: 'true',
      DATA_DIR: path.join(dir, 'allow-http'),
    });
    expect(lines.map((line) => [line.origin, line.mode])).toEqual([
      ['http://auth.internal:8080', 'production'],
    ]);
  });

  it('names where webhooks go, by origin only: never a path, query or user', async () => {
    const { lines, output } = await started({
      DATA_DIR: path.join(dir, 'webhooks'),
      AUTH_SECRET: secret,
      WEBHOOK_URL: 'https://hooks.example.com/gatehouse?key=not-shown http://127.0.0.1:8080/in',
      WEBHOOK_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    });
    expect(lines.map((line) => (line as StartLine & { webhooks?: string[] }).webhooks)).toEqual([
      ['https://hooks.example.com', 'http://127.0.0.1:8080'],
    ]);
    expect(lines[0]?.msg).toMatch(
      /, webhooks to https:\/\/hooks\.example\.com, http:\/\/127\.0\.0\.1:8080$/,
    );
    expect(output).not.toContain('not-shown');
  });

  it('WORKERS=2: one line, from the primary, with the worker count', async () => {
    // The first worker to listen opens the port; the second may take a while longer.
    const { lines, output } = await started(
      { DATA_DIR: path.join(dir, 'cluster'), AUTH_SECRET: secret, WORKERS: '2' },
      1,
      (text) => (text.match(/Server listening at/g)?.length ?? 0) >= 2,
    );
    expect(lines).toHaveLength(1);
    expect(lines[0]?.workers).toBe(2);
    expect(lines[0]?.msg).toMatch(/, 2 workers$/);
    // Both workers did listen: one line for the service, not one each.
    expect(output.match(/Server listening at/g)?.length).toBe(2);
  });

  describeIfPostgres('on PostgreSQL', () => {
    it('names host, port and database, never the user, password or query', async () => {
      const database = await createTestDatabase();
      try {
        const url = new URL(database.url);
        url.password = 'pw-not-shown';
        url.search = '?application_name=gatehouse-test';
        const { lines, output } = await started({
          ...production,
          AUTH_TRUST_HOST: 'true',
          DATABASE_URL: url.toString(),
          DATA_DIR: path.join(dir, 'pg'),
        });
        const store = `postgresql ${url.hostname}:${url.port}/${database.name}`;
        expect(lines.map((line) => [line.store, line.origin])).toEqual([
          [store, "from each request's Host"],
        ]);
        expect(output).not.toMatch(/pw-not-shown|application_name|postgres@/);
      } finally {
        await database.drop();
      }
    });
  });
});

describe('variables that look meant for Gatehouse', () => {
  it('each gets one warning before the configuration is checked; platform variables none', async () => {
    const result = await runNode('gatehouse.mjs', [], {
      DATA_DIR: path.join(dir, 'warnings'),
      AUTH_SECRT: 'not-shown-secret-value',
      GATEHOUSE_SIGNUP: 'on',
      AUTH_DEBUG: 'true',
      NEXTAUTH_URL: 'http://localhost:3000',
      HOME: '/root',
      NODE_OPTIONS: '--max-old-space-size=512',
      npm_lifecycle_event: 'start',
      KUBERNETES_SERVICE_HOST: '10.0.0.1',
      GATEHOUSE_PORT: 'tcp://10.0.0.9:3000',
      FLY_APP_NAME: 'gatehouse',
      // Stops the start right after the warnings.
      PORT: 'abc',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      [
        'gatehouse: warning: AUTH_DEBUG is set but Gatehouse does not read it (the variables it reads: docs/configuration.md)',
        'gatehouse: warning: AUTH_SECRT is set but Gatehouse does not read it; did you mean AUTH_SECRET?',
        'gatehouse: warning: GATEHOUSE_SIGNUP is set but Gatehouse does not read it (the variables it reads: docs/configuration.md)',
        'gatehouse: warning: NEXTAUTH_URL is set but Gatehouse does not read it; did you mean AUTH_URL?',
        'gatehouse: invalid configuration',
        '  - PORT: must be a whole number from 1 to 65535 (e.g. PORT=3000)',
        '',
      ].join('\n'),
    );
  });

  it('the users CLI warns too', async () => {
    const result = await runNode('gatehouse-cli.cjs', ['users', 'list'], {
      DATA_DIR: path.join(dir, 'cli-warnings'),
      DATABSE_URL: 'postgres://db/gatehouse',
    });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe(
      'gatehouse: warning: DATABSE_URL is set but Gatehouse does not read it; did you mean DATABASE_URL?\n',
    );
  });
});
