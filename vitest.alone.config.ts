import { defineConfig } from 'vitest/config';

// Suites whose subject is a time: the service's latency under a flood, whether an answer takes
// as long for a taken address as for a new one, or for an over-long password as for any, and the
// mail worker's leases against a relay's delays.
// Run by `npm test` after the others, one file at a time, so no other suite's browsers, builds
// or hashing share the two cores with what they measure (a health probe's p99 is the service's
// promise, not the neighbour's; four workers made the address timings differ by a third).
// The flood runs again with fast paths off (package.json); the rest are no fast path's subject.
// `npx vitest run --config vitest.alone.config.ts` runs them by hand.
export const aloneSuites = [
  'test/http/pipelined-flood.test.ts',
  'test/users/password-bound.test.ts',
  'test/account/signup-answers.test.ts',
  'test/account/email-change-answers.test.ts',
  'test/account/password-reset-answers.test.ts',
  'test/account/email-signin-answers.test.ts',
  // Leases, renewals and a relay's timeouts measured in real time: two CI runs under four
  // workers saw a renewal come late (a second attempt) and another test's late mail.
  'test/mail/delivery.test.ts',
  'test/users/old-hash-timing.test.ts',
  // Health probes' p99 while 50 sign-ins wait on a lock: a CI run under four workers measured
  // 406 ms against its 400 (a stuck event loop shows 782).
  'test/db/sqlite-lock-held-elsewhere.test.ts',
];

export default defineConfig({
  test: {
    include: aloneSuites,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    fileParallelism: false,
  },
});
