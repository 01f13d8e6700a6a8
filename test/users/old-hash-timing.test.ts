import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../helpers/client.js';
import { freePort, startServerProcess, type ServerProcess } from '../helpers/processes.js';
import { distDir, runNode } from '../helpers/spawn.js';

const testRequire = createRequire(new URL('../package.json', import.meta.url));
const bcryptjs = testRequire('bcryptjs') as { hashSync(password: string, cost: number): string };

/*
 * An imported user's old bcrypt hash (cost 12, about 170 ms a check here; today's argon2id takes
 * about 10) must not tell a stranger that the address is there. The built service, as users run
 * it, times the store's old kinds at start-up; from the first sign-in on, an unknown address
 * answers in the imported user's time. Runs alone (vitest.alone.config.ts): its subject is a time.
 */
describe('the time a sign-in takes with imported old hashes', () => {
  let dir: string;
  let server: ServerProcess;
  let url: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-old-hash-timing-'));
    const env = { DATABASE_URL: `file:${path.join(dir, 'timing.db')}` };
    const line = {
      id: 'old-1',
      email: 'old@example.com',
      passwordHash: bcryptjs.hashSync('an old password', 12),
    };
    const imported = await runNode(
      'gatehouse-cli.cjs',
      ['users', 'import', '-'],
      env,
      JSON.stringify(line),
    );
    expect(imported.code, imported.stderr).toBe(0);
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    server = await startServerProcess(process.execPath, [path.join(distDir, 'gatehouse.mjs')], {
      port,
      env: {
        PATH: process.env.PATH ?? '',
        ...env,
        PORT: String(port),
        AUTH_SECRET: 'timing-test-secret-0123456789abcdefghijklmn',
        LOG_LEVEL: 'info',
      },
    });
    for (
      let i = 0;
      i < 200 && !server.output().includes('timed the old password hash kinds');
      i += 1
    )
      await new Promise((resolve) => setTimeout(resolve, 25));
  });
  afterAll(async () => {
    await server?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const timed = async (email: string) => {
    const client = new Client(url);
    const started = performance.now();
    await client.signIn(email, 'not the password at all');
    return performance.now() - started;
  };

  it('an unknown address takes as long as the imported one, before any sign-in at it', async () => {
    expect(server.output()).toContain('"kinds":1');
    // Not counted: the hashing threads start with the first check of all.
    await timed('warm-up@example.com');
    const unknown = await timed('nobody-here@example.com');
    const known = await timed('old@example.com');
    // bcrypt at cost 12 takes over 100 ms on any machine this runs on; argon2id well under.
    expect(known).toBeGreaterThan(100);
    expect(unknown).toBeGreaterThan(known * 0.7);
  });
});
