import { defineConfig } from 'vitest/config';

// `npm run test:examples`: the guides for Express, a single-page app and Python, and the move
// from Auth.js (its app installed by `npm test`'s set-up), each followed from empty folders
// (test/examples/). Kept out of `npm test` (vitest.config.ts) for its time; CI runs it after
// `npm test` (.ci/run).
export default defineConfig({
  test: {
    include: ['test/examples/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 180_000,
    maxWorkers: 2,
    minWorkers: 1,
  },
});
