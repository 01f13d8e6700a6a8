// The esbuild options of each bundle in dist/, shared by the build (scripts/build/bundle.ts) and
// the dev loop (scripts/build/dev.ts), so `npm run dev` runs the very bundle `npm start` runs.
import fs from 'node:fs';
import path from 'node:path';
import type { BuildOptions, Plugin } from 'esbuild';

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
    '@node-rs/bcrypt',
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

/**
 * Fastify's server module loads node:https and node:http2 when it loads (with node:tls, five
 * more modules of Node's own), though only a server built with `https` or `http2` options uses
 * them, and Gatehouse's server is plain HTTP from its own factory (src/http/front-door.ts): ~4
 * ms of every start. Here each becomes a stand-in that loads the module on its first property
 * read. The build fails if Fastify no longer reads them so, rather than quietly keeping them.
 */
const lazyFastifyTransports: Plugin = {
  name: 'lazy-fastify-transports',
  setup(build) {
    build.onLoad({ filter: /[\\/]fastify[\\/]lib[\\/]server\.js$/ }, (args) => {
      let source = fs.readFileSync(args.path, 'utf8');
      for (const name of ['https', 'http2']) {
        const eager = `const ${name} = require('node:${name}')`;
        if (!source.includes(eager)) {
          throw new Error(`${args.path} no longer has "${eager}": see lazyFastifyTransports`);
        }
        source = source.replace(
          eager,
          `const ${name} = new Proxy({}, { get: (_, key) => require('node:${name}')[key] })`,
        );
      }
      return { contents: source, loader: 'js' };
    });
  },
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
      plugins: [lazyFastifyTransports],
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
  for (const script of ['argon2-worker.cjs', 'legacy-hashes.cjs']) {
    fs.copyFileSync(path.join(root, 'src/users', script), path.join(root, 'dist', script));
  }
}
