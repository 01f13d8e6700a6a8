// What a build of dist/ is made from, and the stamp that records it: scripts/build/bundle.ts
// writes the stamp after a complete build, and scripts/build/ensure-built.ts (`npm start`'s and
// `npm run users`' first step) compares it with the tree to build only when something changed.
// Content hashes, not mtimes: a checkout, a `touch` or a copy that keeps the bytes is not a
// change, and an edit that keeps the mtime (an editor's restore, a fast second save) still is.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** dist/'s stamp: the inputs' hashes as the last complete build read them. */
export const stampName = '.build-stamp.json';

/** The files a build reads, relative to the repository root. */
export function inputFiles(root: string): string[] {
  const files = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json'];
  for (const dir of ['src', 'scripts/build']) {
    for (const entry of fs.readdirSync(path.join(root, dir), {
      recursive: true,
      withFileTypes: true,
    })) {
      if (entry.isFile()) files.push(path.relative(root, path.join(entry.parentPath, entry.name)));
    }
  }
  return files.filter((file) => fs.existsSync(path.join(root, file))).sort();
}

/** The build's outputs that `npm start` and the CLI run: all must exist for dist/ to be current. */
export const outputs = [
  'gatehouse.mjs',
  'gatehouse.cjs',
  'gatehouse-cli.cjs',
  'argon2-worker.cjs',
  'legacy-hashes.cjs',
  'healthcheck.cjs',
  'gatehouse',
];

export interface Stamp {
  /** The Node that built it: the code cache and the `target` belong to one Node version. */
  node: string;
  files: Record<string, string>;
}

/** The stamp for the tree as it is now. */
export function currentStamp(root: string): Stamp {
  const files: Record<string, string> = {};
  for (const file of inputFiles(root)) {
    files[file] = createHash('sha256')
      .update(fs.readFileSync(path.join(root, file)))
      .digest('hex')
      .slice(0, 16);
  }
  return { node: process.version, files };
}

export function readStamp(dist: string): Stamp | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(dist, stampName), 'utf8')) as Stamp;
  } catch {
    return undefined;
  }
}

export function writeStamp(dist: string, stamp: Stamp): void {
  fs.writeFileSync(path.join(dist, stampName), `${JSON.stringify(stamp, null, 2)}\n`);
}

/** Why dist/ must be built, or undefined when it is current. */
export function staleReason(root: string): string | undefined {
  const dist = path.join(root, 'dist');
  const missing = outputs.find((file) => !fs.existsSync(path.join(dist, file)));
  if (missing !== undefined) return `dist/${missing} is missing`;
  const built = readStamp(dist);
  if (built === undefined) return `dist/${stampName} is missing (no complete build recorded)`;
  const now = currentStamp(root);
  if (built.node !== now.node) return `Node ${now.node} differs from the build's ${built.node}`;
  const changed = Object.keys(now.files).filter((file) => built.files[file] !== now.files[file]);
  const removed = Object.keys(built.files).filter((file) => !(file in now.files));
  const first = changed[0] ?? removed[0];
  if (first === undefined) return undefined;
  const more = changed.length + removed.length - 1;
  const what =
    changed[0] !== undefined ? (built.files[first] ? 'changed' : 'is new') : 'was removed';
  return `${first} ${what}${more > 0 ? ` (and ${more} more)` : ''}`;
}
