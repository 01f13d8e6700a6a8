import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { distDir, runNode } from '../helpers/spawn.js';

describe('gatehouse users CLI: suggestions and early refusals', () => {
  let dir: string;
  let env: Record<string, string>;
  const users = (args: string[], stdin?: string) =>
    runNode('gatehouse-cli.cjs', ['users', ...args], env, stdin);

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-cli-suggest-'));
    env = { DATABASE_URL: `file:${path.join(dir, 'cli.db')}` };
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it.each([
    [['delete', '--email', 'a@example.com'], "did you mean 'remove'?", 'delete'],
    [['unlcok', '--email', 'a@example.com'], "did you mean 'unlock'?", 'unlcok'],
    [['add', '--emial', 'a@example.com'], 'did you mean --email?', 'emial'],
    [['list', '--jsno'], 'did you mean --json?', 'jsno'],
  ])(
    'users %j suggests the known name and does not echo the typed one',
    async (args, hint, typed) => {
      const result = await users(args);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(hint);
      // The usage text may hold the word ("delete a user"); the error line must not.
      expect(result.stderr.split('\n')[0]).not.toContain(typed);
    },
  );

  it('suggests the command group without echoing it', async () => {
    const result = await runNode('gatehouse-cli.cjs', ['user', 'list'], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("did you mean 'users'?");
    expect(result.stderr).not.toContain("'user'");
  });

  it('suggests nothing for an argument far from every name (it might be a password)', async () => {
    const result = await users(['add', '--Tr0ub4dor and 3 horses']);
    expect(result.code).toBe(2);
    expect(result.stderr).not.toContain('did you mean');
    expect(result.stderr).not.toContain('Tr0ub4dor');
  });

  // `script` gives the CLI a terminal, so the hidden prompt is the one a person sees.
  const hasScript = spawnSync('script', ['--version']).status === 0;
  it.skipIf(!hasScript)(
    'refuses a short password at once, before asking it again',
    async () => {
      const command = `'${process.execPath}' '${path.join(distDir, 'gatehouse-cli.cjs')}' users add --email short@example.com`;
      const child = spawn('script', ['-qec', command, '/dev/null'], {
        env: { PATH: process.env.PATH ?? '', ...env },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let output = '';
      let typed = false;
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (!typed && output.includes('Password: ')) {
          typed = true;
          child.stdin.write('short\r');
        }
      });
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      child.stdin.destroy();
      expect(code).toBe(1);
      expect(output).toContain('the password must be at least 12 characters');
      expect(output).not.toContain('Repeat password');
    },
    20_000,
  );
});
