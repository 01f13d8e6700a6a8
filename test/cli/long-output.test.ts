import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/db/migrate.js';
import { openDatabase } from '../../src/db/open.js';
import { createKyselyUserStore } from '../../src/users/kysely-store.js';
import { distDir } from '../helpers/spawn.js';

/*
 * Output longer than a pipe holds (64 KB) reaches a slow reader whole: the CLI waits for its
 * output to leave before it exits. `users list --json` of 2,000 users is about 300 KB; the
 * reader here takes it in pieces with pauses, as `| less` or a busy script would.
 */
describe('the CLI with a slow reader on its pipe', () => {
  let dir: string;
  let url: string;
  const count = 2_000;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-long-output-'));
    url = `file:${path.join(dir, 'cli.db')}`;
    const { db } = openDatabase(url);
    await migrateToLatest(db);
    const users = createKyselyUserStore(db);
    for (let i = 0; i < count; i += 1) {
      await users.create({
        email: `person-${String(i).padStart(4, '0')}@example.com`,
        name: `Person number ${i} with a name long enough to fill the pipe`,
        passwordHash: 'not-a-hash',
      });
    }
    await db.destroy();
  }, 60_000);
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('users list --json arrives whole: every user, valid JSON', async () => {
    const child = spawn(
      process.execPath,
      [path.join(distDir, 'gatehouse-cli.cjs'), 'users', 'list', '--json'],
      {
        env: { PATH: process.env.PATH ?? '', DATABASE_URL: url },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      // A slow reader: the pipe fills while the CLI is already done.
      child.stdout.pause();
      setTimeout(() => child.stdout.resume(), 20);
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const output = Buffer.concat(chunks).toString();
    expect(output.length).toBeGreaterThan(128 * 1024);
    const rows = JSON.parse(output) as { email: string }[];
    expect(rows).toHaveLength(count);
    expect(rows.at(-1)?.email).toBe('person-1999@example.com');
  }, 60_000);
});
