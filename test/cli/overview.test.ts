import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { distDir, runNode } from '../helpers/spawn.js';

const root = path.resolve(distDir, '..');
const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;

describe('the CLI an operator can find: `gatehouse --help` and hints that run as printed', () => {
  let dir: string;
  const cli = (args: string[], env: Record<string, string> = {}) =>
    runNode('gatehouse-cli.cjs', args, { DATA_DIR: path.join(dir, 'data'), ...env });

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-cli-overview-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('--help lists every command group with one line, and exits 0', async () => {
    const help = await cli(['--help']);
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toMatch(/^Usage: gatehouse <group> <command> \[options\]\n/);
    const groups = help.stdout.split('\n').filter((line) => /^ {2}\S/.test(line));
    expect(groups).toEqual([
      expect.stringMatching(/^ {2}users {6}\S.*\(npx gatehouse users --help\)$/),
      expect.stringMatching(/^ {2}mail {7}\S.*\(npx gatehouse mail --help\)$/),
      expect.stringMatching(/^ {2}audit {6}\S.*\(npx gatehouse audit --help\)$/),
      expect.stringMatching(/^ {2}webhooks {3}\S.*\(npx gatehouse webhooks --help\)$/),
      expect.stringMatching(/^ {2}tokens {5}\S.*\(npx gatehouse tokens --help\)$/),
      expect.stringMatching(/^ {2}import {5}\S.*\(npx gatehouse import --help\)$/),
    ]);
    for (const alias of ['-h', 'help']) expect(await cli([alias])).toEqual(help);
  });

  it('with no arguments prints the same overview as a usage error (exit 2)', async () => {
    const bare = await cli([]);
    expect(bare.code).toBe(2);
    expect(bare.stdout).toBe((await cli(['--help'])).stdout);
  });

  it('names DATA_DIR and DATABASE_URL, and which database this environment picks', async () => {
    const help = await cli(['--help']);
    expect(help.stdout).toContain('DATABASE_URL (or DATABASE_URL_FILE) when set');
    expect(help.stdout).toContain('$DATA_DIR/gatehouse.db, DATA_DIR being ./data');
    expect(help.stdout).toContain(
      `\nHere: sqlite ${path.join(dir, 'data', 'gatehouse.db')} (from DATA_DIR)\n`,
    );
    const postgres = await cli(['--help'], {
      DATABASE_URL: 'postgresql://gatehouse:s3cret-pw@db.internal:5433/accounts',
    });
    expect(postgres.stdout).toContain(
      '\nHere: postgresql db.internal:5433/accounts (from DATABASE_URL)\n',
    );
    expect(postgres.stdout).not.toContain('s3cret-pw');
    const bad = await cli(['--help'], { DATABASE_URL: 'mysql://nope' });
    expect(bad.code).toBe(0);
    expect(bad.stdout).toContain('\nHere: the settings here have problems: any command lists them');
  });

  it('each group says where its database comes from', async () => {
    for (const group of ['users', 'mail', 'webhooks']) {
      const usage = await cli([group, '--help']);
      expect(usage.code).toBe(0);
      expect(usage.stdout).toContain(
        'The database is DATABASE_URL, else the SQLite file\n$DATA_DIR/gatehouse.db',
      );
    }
  });

  it('an unknown group is refused with the overview', async () => {
    const wrong = await cli(['mali']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/did you mean 'mail'\?\n\nUsage: gatehouse <group> <command>/);
  });

  it('users list has a header row naming its columns', async () => {
    const empty = await cli(['users', 'list']);
    expect(empty.stdout).toBe(
      'no users yet: add one with `npx gatehouse users add --email <email>`\n',
    );
    const added = await runNode(
      'gatehouse-cli.cjs',
      ['users', 'add', '--email', 'ada@example.com', '--password-stdin'],
      { DATA_DIR: path.join(dir, 'data') },
      'a long and fine password',
    );
    expect(added.code).toBe(0);
    const listed = (await cli(['users', 'list'])).stdout.split('\n');
    expect(listed[0]).toBe('EMAIL\tNAME\tSTATE\tID\tADDRESS\tFACTORS\tLOCK');
    expect(listed[1]).toMatch(/^ada@example\.com\tada\tenabled\t/);
  });

  it('in a checkout a hint says `npx gatehouse`; where the entry point is on PATH, `gatehouse`', async () => {
    const checkout = await cli(['mail', 'test', '--to', 'ada@example.com']);
    const id = uuid.exec(checkout.stdout)?.[0] ?? '';
    expect(checkout.stdout).toContain(`\`npx gatehouse mail show ${id}\` shows it`);
    // As the image has it: /usr/local/bin/gatehouse links to dist/gatehouse.
    const bin = path.join(dir, 'bin');
    fs.mkdirSync(bin);
    fs.symlinkSync(path.join(distDir, 'gatehouse'), path.join(bin, 'gatehouse'));
    const image = await cli(['mail', 'test', '--to', 'ada@example.com'], {
      PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}`,
    });
    const imageId = uuid.exec(image.stdout)?.[0] ?? '';
    expect(image.stdout).toContain(`: \`gatehouse mail show ${imageId}\` shows it`);
  });

  const hasNpx = spawnSync('npx', ['--version'], { cwd: root }).status === 0;
  it.skipIf(!hasNpx)(
    '`npx gatehouse --help` in the checkout runs this checkout’s CLI',
    async () => {
      // `--no`: the same lookup as `npx gatehouse`, but it never fetches a package named
      // gatehouse from the registry (there is an unrelated one) should the lookup miss.
      const child = spawn('npx', ['--no', '--', 'gatehouse', '--help'], {
        cwd: root,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? os.homedir() },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      expect(code).toBe(0);
      expect(stdout).toMatch(/^Usage: gatehouse <group> <command> \[options\]\n/);
    },
    60_000,
  );
});
