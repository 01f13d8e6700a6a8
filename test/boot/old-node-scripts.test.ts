import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// A second terminal without `. scripts/build/use-node-24.sh` runs the guides' npm scripts on
// the machine's older Node: each must say which Node it needs, as `npx gatehouse` does, never
// fail with ERR_UNKNOWN_FILE_EXTENSION ".ts" from a step that runs TypeScript.

const root = path.resolve(import.meta.dirname, '../..');
const scripts = (
  JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  }
).scripts;
const gate = 'node scripts/build/require-node.cjs && ';

/** The machine's own Node and npm (Debian's), when they are older than 24. */
const oldNode = (() => {
  const result = spawnSync('/usr/bin/node', ['--version'], { encoding: 'utf8' });
  const major = Number(/^v(\d+)/.exec(result.stdout ?? '')?.[1]);
  return result.status === 0 && major < 24 && fs.existsSync('/usr/bin/npm') ? major : undefined;
})();

describe('the npm scripts on an older Node', () => {
  it('every script that runs TypeScript with node is gated, itself or by its pre-script', () => {
    const ungated = Object.entries(scripts).filter(([name, command]) => {
      if (!/\bnode [^&]*\.ts\b/.test(command)) return false;
      const pre = scripts[`pre${name}`] ?? '';
      // `npm run build` gates itself; a script that builds first is gated by it.
      const builds = command.startsWith('npm run build');
      return !command.startsWith(gate) && !pre.startsWith(gate) && !builds;
    });
    expect(ungated.map(([name]) => name)).toEqual([]);
  });

  it.skipIf(oldNode === undefined)(
    '`npm run users -- list` and `npm start` with Node %s say which Node they need',
    () => {
      for (const args of [['run', 'users', '--', 'list'], ['start']]) {
        const run = spawnSync('/usr/bin/npm', args, {
          cwd: root,
          encoding: 'utf8',
          env: { PATH: '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp' },
          timeout: 60_000,
        });
        expect(run.status).not.toBe(0);
        expect(run.stderr).toContain('Node.js 24 LTS or later is required');
        expect(run.stderr).toContain('scripts/build/use-node-24.sh');
        expect(run.stderr).not.toContain('ERR_UNKNOWN_FILE_EXTENSION');
      }
    },
  );

  it('the gate lets Node 24 through', () => {
    expect(
      execFileSync(process.execPath, [path.join(root, 'scripts/build/require-node.cjs')], {
        encoding: 'utf8',
      }),
    ).toBe('');
  });
});
