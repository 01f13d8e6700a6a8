// One argon2 hash or verification, in a piscina worker thread that runs at a lower CPU
// priority than the event loop (src/users/hasher.ts). Synchronous on purpose: the async API
// would hand the work to libuv's thread pool, at normal priority, and undo the point.
// Plain CommonJS, not TypeScript: worker threads load it as it is, from src/ in the tests and
// from dist/ (copied by scripts/build/bundle.ts) in the build.
'use strict';
const argon2 = require('@node-rs/argon2');

/** `{ op: 'hash', password, params }` → the PHC string; `{ op: 'verify', hash, password }` → boolean. */
module.exports = function argon2Task(task) {
  if (task.op === 'hash') return argon2.hashSync(task.password, task.params);
  try {
    return argon2.verifySync(task.hash, task.password);
  } catch {
    // A malformed stored hash verifies nothing; the caller treats it as a wrong password.
    return false;
  }
};
