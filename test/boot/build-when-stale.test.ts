import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  currentStamp,
  outputs,
  readStamp,
  staleReason,
  stampName,
  writeStamp,
} from '../../scripts/build/inputs.ts';

// `npm start`'s first step (scripts/build/ensure-built.ts) in a small stand-in repository whose
// `npm run build` only says it ran: dist/ is current until a file the build reads changes in
// content (a touch is not a change), an output goes missing, or the stamp is absent.

const repoRoot = path.resolve(import.meta.dirname, '../..');

describe('npm start builds only when dist/ is stale', () => {
  let root: string;
  const dist = () => path.join(root, 'dist');
  const write = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), text);
  };
  /** A complete build as far as the check can tell: every output and a stamp of the tree now. */
  const built = () => {
    fs.mkdirSync(dist(), { recursive: true });
    for (const file of outputs) fs.writeFileSync(path.join(dist(), file), '');
    writeStamp(dist(), currentStamp(root));
  };
  const ensureBuilt = () =>
    spawnSync(process.execPath, [path.join(root, 'scripts/build/ensure-built.ts')], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '' },
      encoding: 'utf8',
    });

  beforeAll(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-stale-'));
    write(
      'package.json',
      JSON.stringify({
        name: 'stand-in',
        private: true,
        type: 'module',
        scripts: { build: 'echo stub build ran' },
      }),
    );
    write('tsconfig.json', '{}\n');
    write('src/main.ts', 'export const a = 1;\n');
    write('src/auth/x.ts', 'export const x = 1;\n');
    for (const file of ['ensure-built.ts', 'inputs.ts']) {
      fs.cpSync(path.join(repoRoot, 'scripts/build', file), path.join(root, 'scripts/build', file));
    }
  });

  afterAll(() => {
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('says "dist/ is current" and does not build when nothing changed, even after a touch', () => {
    built();
    const later = new Date(Date.now() + 60_000);
    fs.utimesSync(path.join(root, 'src/main.ts'), later, later);
    const run = ensureBuilt();
    expect(run.status).toBe(0);
    expect(run.stderr).toBe('dist/ is current\n');
    expect(run.stdout).not.toContain('stub build ran');
  });

  it('builds when a source changed, naming it', () => {
    built();
    write('src/auth/x.ts', 'export const x = 2;\n');
    const run = ensureBuilt();
    expect(run.status).toBe(0);
    expect(run.stderr).toContain('building: src/auth/x.ts changed\n');
    expect(run.stdout).toContain('stub build ran');
  });

  it('names new and removed sources, changed build inputs, and counts the rest', () => {
    built();
    write('src/new.ts', 'export {};\n');
    expect(staleReason(root)).toBe('src/new.ts is new');
    built();
    fs.rmSync(path.join(root, 'src/new.ts'));
    expect(staleReason(root)).toBe('src/new.ts was removed');
    built();
    write('tsconfig.json', '{ "compilerOptions": {} }\n');
    write('src/main.ts', 'export const a = 3;\n');
    expect(staleReason(root)).toBe('src/main.ts changed (and 1 more)');
  });

  it('builds when an output is missing, the stamp is missing, or Node changed', () => {
    built();
    fs.rmSync(path.join(dist(), 'gatehouse.cjs'));
    expect(staleReason(root)).toBe('dist/gatehouse.cjs is missing');
    built();
    fs.rmSync(path.join(dist(), stampName));
    expect(staleReason(root)).toMatch(/^dist\/\.build-stamp\.json is missing/);
    built();
    const stamp = readStamp(dist());
    writeStamp(dist(), { ...stamp!, node: 'v23.0.0' });
    expect(staleReason(root)).toBe(`Node ${process.version} differs from the build's v23.0.0`);
  });

  it('fails as the build fails', () => {
    built();
    write('src/main.ts', 'export const a = 4;\n');
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    pkg.scripts.build = 'exit 3';
    write('package.json', JSON.stringify(pkg));
    const run = ensureBuilt();
    expect(run.stderr).toContain('building: package.json changed (and 1 more)');
    expect(run.status).toBe(3);
  });
});
