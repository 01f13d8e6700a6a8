// The server's start command as package.json's "start" script gives it, so the benchmark and
// the build's code-cache warm-up run node exactly as `npm start` does: V8 rejects a code cache
// made under other flags, and the flags are part of what the benchmark measures.
import fs from 'node:fs';
import path from 'node:path';

/** node's arguments from `"start": "node [flags…] dist/gatehouse.mjs"`, entry path resolved. */
export function startArgs(root: string): string[] {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    scripts?: { start?: unknown };
  };
  const words = String(pkg.scripts?.start ?? '')
    .trim()
    .split(/\s+/);
  const entry = words.at(-1);
  const flags = words.slice(1, -1);
  if (
    words[0] !== 'node' ||
    entry !== 'dist/gatehouse.mjs' ||
    !flags.every((f) => f.startsWith('--'))
  ) {
    throw new Error(
      `package.json "start" must read "node [--flags…] dist/gatehouse.mjs", not ${JSON.stringify(pkg.scripts?.start)}`,
    );
  }
  return [...flags, path.join(root, entry)];
}
