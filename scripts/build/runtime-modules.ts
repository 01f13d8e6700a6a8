// Usage: node scripts/build/runtime-modules.ts OUT_DIR
//
// Copies into OUT_DIR/node_modules only what the bundles load at run time: the modules
// scripts/build/bundle.ts leaves external (native code, and pg, loaded only for PostgreSQL) and
// their dependencies, as installed in ./node_modules. The container image ships this instead
// of a full production install (Fastify, Auth.js, Kysely and zod are inside the bundles).
// Written by hand: `npm prune` keeps every production dependency, bundled or not.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(fileURLToPath(new URL('../../package.json', import.meta.url)));
const runtimeRoots = ['@node-rs/argon2', '@node-rs/bcrypt', 'piscina', '@napi-rs/nice', 'pg'];
// Needed only to compile a native module from source, never at run time.
const installOnly = new Set(['node-addon-api', 'node-gyp-build', 'prebuild-install']);

const out = process.argv[2] ?? usage();

function usage(): never {
  process.stderr.write('usage: node scripts/build/runtime-modules.ts OUT_DIR\n');
  process.exit(2);
}

/** Node's lookup: the nearest node_modules/<name> from `fromDir` up to the project root. */
function resolvePackage(name: string, fromDir: string): string | undefined {
  for (let dir = fromDir; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (fs.existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (dir === root || dir === path.dirname(dir)) return undefined;
  }
}

const copied = new Set<string>();
function copyPackage(name: string, fromDir: string, optional: boolean): void {
  const source = resolvePackage(name, fromDir);
  if (source === undefined) {
    // Optional dependencies for other platforms (argon2's per-OS builds) are not installed.
    if (optional) return;
    throw new Error(`runtime-modules: ${name} is not installed (needed from ${fromDir})`);
  }
  if (copied.has(source)) return;
  copied.add(source);
  const target = path.join(out, path.relative(root, source));
  fs.cpSync(source, target, { recursive: true, filter: (file) => !file.endsWith('.md') });
  const manifest = JSON.parse(fs.readFileSync(path.join(source, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
    optionalDependencies?: Record<string, string>;
  };
  for (const dependency of Object.keys(manifest.dependencies ?? {})) {
    if (!installOnly.has(dependency)) copyPackage(dependency, source, false);
  }
  for (const dependency of Object.keys(manifest.optionalDependencies ?? {})) {
    copyPackage(dependency, source, true);
  }
}

for (const name of runtimeRoots) copyPackage(name, root, false);
process.stdout.write(
  `runtime-modules: ${copied.size} packages → ${path.join(out, 'node_modules')}\n`,
);
