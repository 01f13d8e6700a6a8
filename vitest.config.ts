import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Files run in parallel processes on 2 cores; argon2 work is heavy, so two at a time.
    maxWorkers: 2,
    minWorkers: 1,
  },
});
