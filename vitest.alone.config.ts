import { defineConfig } from 'vitest/config';

// Suites whose subject is a time: the service's latency under a flood, and how fast an
// over-long password is refused next to any other. Run by `npm test` after the others, one file
// at a time, so no other suite's browsers, builds or hashing share the two cores with what they
// measure (a health probe's p99 is the service's promise, not the neighbour's).
// `npx vitest run --config vitest.alone.config.ts` runs them by hand.
export const aloneSuites = [
  'test/http/pipelined-flood.test.ts',
  'test/users/password-bound.test.ts',
];

export default defineConfig({
  test: {
    include: aloneSuites,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    fileParallelism: false,
  },
});
