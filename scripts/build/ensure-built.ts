// `npm start`'s and `npm run users`' first step: builds dist/ only when it is stale, that is when
// a file the build reads (src/, scripts/build/, package.json, the lock, tsconfig*.json) differs
// from what the last complete build read, an output is missing, or Node changed
// (scripts/build/inputs.ts). Prints one line to stderr either way ("dist/ is current" or
// "building: src/x.ts changed"), then runs `npm run build` and exits with its status.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { staleReason } from './inputs.ts';

const root = path.dirname(fileURLToPath(new URL('../../package.json', import.meta.url)));
const reason = staleReason(root);
if (reason === undefined) {
  process.stderr.write('dist/ is current\n');
} else {
  process.stderr.write(`building: ${reason}\n`);
  const npm = process.env.npm_execpath;
  // Under npm, its own CLI with this Node; run directly, the `npm` on PATH.
  const result = npm
    ? spawnSync(process.execPath, [npm, 'run', 'build'], { cwd: root, stdio: 'inherit' })
    : spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
  process.exitCode = result.status ?? 1;
}
