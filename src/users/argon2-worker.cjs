// One password hash or verification, in a piscina worker thread that runs at a lower CPU
// priority than the event loop (src/users/hasher.ts). Synchronous on purpose: the async API
// would hand the work to libuv's thread pool, at normal priority, and undo the point.
// Plain CommonJS, not TypeScript: worker threads load it as it is, from src/ in the tests and
// from dist/ (copied by scripts/build/bundle.ts) in the build.
'use strict';
const argon2 = require('@node-rs/argon2');
const { verifyHash } = require('./legacy-hashes.cjs');

/**
 * `{ op: 'hash', password, params }` → the PHC string; `{ op: 'verify', hash, password,
 * firebase }` → `{ matched, ms }`: whether it matched (any format legacy-hashes.cjs reads; a
 * malformed hash matches nothing) and the milliseconds it took, for the hasher's timing floor.
 */
module.exports = function argon2Task(task) {
  if (task.op === 'hash') return argon2.hashSync(task.password, task.params);
  const started = performance.now();
  const matched = verifyHash(task.hash, task.password, task.firebase);
  return { matched, ms: performance.now() - started };
};
