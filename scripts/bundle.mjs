// Bundles the server into one file and warms its V8 code cache. Measured here: loading ~400
// small ES modules (Kysely, zod, Fastify, Auth.js) dominated start-up; one file roughly halves
// the time to the first 200, and the code cache (src/boot/run-bundle.ts) takes another ~60 ms
// off. Native and optional modules stay external, loaded from node_modules.
//
//   dist/gatehouse.cjs          the server, one CommonJS file exporting main()
//   dist/gatehouse.mjs          the entry point: runs gatehouse.cjs with the code cache
//   dist/gatehouse.cjs.v8cache  the cache, written by one throw-away start below
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { startArgs } from './start-command.mjs';

const dist = fileURLToPath(new URL('../dist', import.meta.url));
const common = { bundle: true, platform: 'node', target: 'node20', logLevel: 'warning' };

await build({
  ...common,
  entryPoints: ['src/main.ts'],
  outfile: path.join(dist, 'gatehouse.cjs'),
  // CommonJS so it can be compiled with a code cache (vm.Script); ES modules cannot on Node 20.
  format: 'cjs',
  sourcemap: true,
  define: { 'import.meta.url': '__gatehouseModuleUrl' },
  banner: {
    js: "const __gatehouseModuleUrl = require('node:url').pathToFileURL(__filename).href;",
  },
  // Fastify's schema compilers are never loaded (src/app.ts supplies its own factories), so
  // they stay out of the file V8 must parse at every start.
  external: [
    'better-sqlite3',
    '@node-rs/argon2',
    'pg',
    'pg-native',
    '@fastify/ajv-compiler',
    '@fastify/fast-json-stringify-compiler',
  ],
  minifyWhitespace: true,
  minifySyntax: true,
});

await build({
  ...common,
  entryPoints: ['src/boot/run-bundle.ts'],
  outfile: path.join(dist, 'gatehouse.mjs'),
  format: 'esm',
  packages: 'external',
});

await warmCodeCache();

/**
 * Starts the built server once, as `npm start` does (loopback, any free port, a throw-away data
 * folder), so the runner writes the code cache, then stops it. Best effort: without a cache the server still
 * starts, only slower, and the first real start writes one if it may.
 */
async function warmCodeCache() {
  const cacheFile = path.join(dist, 'gatehouse.cjs.v8cache');
  fs.rmSync(cacheFile, { force: true });
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-warm-'));
  const child = spawn(process.execPath, startArgs(path.dirname(dist)), {
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: '0',
      DATA_DIR: dataDir,
      DATABASE_URL: `file:${path.join(dataDir, 'gatehouse.db')}`,
      AUTH_SECRET: randomBytes(32).toString('base64'),
      LOG_LEVEL: 'silent',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise((resolve) => child.on('close', resolve));
  let done = false;
  void exited.then(() => (done = true));
  const deadline = Date.now() + 30_000;
  while (!done && !fs.existsSync(cacheFile) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const written = fs.existsSync(cacheFile);
  if (!done) child.kill('SIGTERM');
  await exited;
  fs.rmSync(dataDir, { recursive: true, force: true });
  if (!written) {
    process.stderr.write(
      `bundle: warning: no V8 code cache was written; the server will start slower\n${stderr}`,
    );
  }
}
