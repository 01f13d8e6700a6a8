import cluster from 'node:cluster';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
import { refuseUnsupportedNode } from './node-version.js';

/**
 * The server's entry point (`dist/gatehouse.mjs`): runs the bundle `dist/gatehouse.cjs` with a
 * V8 code cache kept beside it, so a start skips parsing and compiling most of the 1 MB bundle.
 * Kept on Node 24 instead of `module.enableCompileCache()` because it is measurably faster: Node
 * makes its cache when a file is compiled, which holds only the eagerly compiled top level
 * (0.5 MB here), while this one is taken after start-up and holds every function start-up
 * compiled (1.2 MB). Measured on Node 24.21, one start after another, median of 12 to the first
 * 200: this runner 97 ms, `enableCompileCache` 114 ms, no cache 134 ms (docs/performance.md).
 * V8 rejects a cache made by another Node version, V8 flags or bundle, and then this simply
 * compiles and writes a fresh one.
 */

interface BundleModule {
  exports: { main?: () => Promise<void> };
}

refuseUnsupportedNode();

const bundle = fileURLToPath(new URL('./gatehouse.cjs', import.meta.url));
const cacheFile = `${bundle}.v8cache`;

function readCache(): Buffer | undefined {
  try {
    return fs.readFileSync(cacheFile);
  } catch {
    return undefined;
  }
}

/** Best effort: a read-only install only loses the speed-up, never the service. */
function writeCache(data: Buffer): void {
  const temporary = `${cacheFile}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(temporary, data);
    fs.renameSync(temporary, cacheFile);
  } catch {
    fs.rmSync(temporary, { force: true });
  }
}

const cachedData = readCache();
// The same wrapper Node's CommonJS loader uses, so the bundle sees require, module, __filename.
const script = new vm.Script(
  `(function (exports, require, module, __filename, __dirname) {${fs.readFileSync(bundle, 'utf8')}\n})`,
  { filename: bundle, cachedData },
);
const loaded: BundleModule = { exports: {} };
(script.runInThisContext() as (...args: unknown[]) => void)(
  loaded.exports,
  createRequire(bundle),
  loaded,
  bundle,
  path.dirname(bundle),
);
if (typeof loaded.exports.main !== 'function') throw new Error(`${bundle} exports no main()`);
await loaded.exports.main();
// Taken after start-up, the cache holds the functions start-up compiled, not just the top level.
if (cluster.isPrimary && (cachedData === undefined || script.cachedDataRejected === true)) {
  writeCache(script.createCachedData());
}
// A build step (scripts/build/bundle.ts, the Dockerfile) starts the server only to warm the cache.
if (process.env.GATEHOUSE_WARM_CODE_CACHE === '1') process.kill(process.pid, 'SIGTERM');
