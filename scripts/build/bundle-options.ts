// The esbuild options of each bundle in dist/, shared by the build (scripts/build/bundle.ts) and
// the dev loop (scripts/build/dev.ts), so `npm run dev` runs the very bundle `npm start` runs.
import fs from 'node:fs';
import path from 'node:path';
import type { BuildOptions } from 'esbuild';

const common: BuildOptions = {
  bundle: true,
  platform: 'node',
  target: 'node24',
  logLevel: 'warning',
};
// CommonJS so the server can be compiled with a code cache taken after start-up (vm.Script,
// src/boot/run-bundle.ts says why). `import.meta.url` becomes the bundle's own URL.
const commonJs: BuildOptions = {
  ...common,
  format: 'cjs',
  define: { 'import.meta.url': '__gatehouseModuleUrl' },
  banner: {
    js: "const __gatehouseModuleUrl = require('node:url').pathToFileURL(__filename).href;",
  },
  // Fastify's schema compilers are never loaded (src/app.ts supplies its own factories), so
  // they stay out of the file V8 must parse at every start.
  external: [
    '@node-rs/argon2',
    // Loads its own worker script from its folder, and that loads @napi-rs/nice.
    'piscina',
    'pg',
    'pg-native',
    '@fastify/ajv-compiler',
    '@fastify/fast-json-stringify-compiler',
  ],
  minifyWhitespace: true,
  minifySyntax: true,
};

export interface Bundles {
  /** dist/gatehouse.cjs: the server, exporting main(). */
  server: BuildOptions;
  /** dist/gatehouse-cli.cjs: the users CLI. */
  cli: BuildOptions;
  /** dist/healthcheck.cjs: the container's HEALTHCHECK. */
  healthcheck: BuildOptions;
  /** dist/gatehouse.mjs: the entry point that runs gatehouse.cjs with the code cache. */
  runner: BuildOptions;
}

/** Each bundle's options, paths absolute under `root` (the repository). */
export function bundleOptions(root: string): Bundles {
  const dist = path.join(root, 'dist');
  const src = (file: string) => path.join(root, 'src', file);
  return {
    server: {
      ...commonJs,
      absWorkingDir: root,
      entryPoints: [src('main.ts')],
      outfile: path.join(dist, 'gatehouse.cjs'),
      sourcemap: true,
    },
    cli: {
      ...commonJs,
      absWorkingDir: root,
      entryPoints: [src('cli/entry.ts')],
      outfile: path.join(dist, 'gatehouse-cli.cjs'),
    },
    healthcheck: {
      ...common,
      absWorkingDir: root,
      entryPoints: [src('health/healthcheck.ts')],
      outfile: path.join(dist, 'healthcheck.cjs'),
      format: 'cjs',
    },
    runner: {
      ...common,
      absWorkingDir: root,
      entryPoints: [src('boot/run-bundle.ts')],
      outfile: path.join(dist, 'gatehouse.mjs'),
      format: 'esm',
      packages: 'external',
    },
  };
}

/** The hashing threads' script, copied beside the bundle (src/users/hasher.ts finds it there). */
export function copyWorker(root: string): void {
  fs.copyFileSync(
    path.join(root, 'src/users/argon2-worker.cjs'),
    path.join(root, 'dist/argon2-worker.cjs'),
  );
}
