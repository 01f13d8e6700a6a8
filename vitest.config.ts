import { configDefaults, defineConfig } from 'vitest/config';
import { aloneSuites } from './vitest.alone.config.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Root and a Docker engine: scripts/containers.sh runs them (vitest.containers.config.ts).
    // The guides for the other stacks: `npm run test:examples` (vitest.examples.config.ts).
    // The flood suites: one at a time after the others (vitest.alone.config.ts).
    exclude: [...configDefaults.exclude, 'test/containers/**', 'test/examples/**', ...aloneSuites],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Files run in parallel processes on 2 cores; argon2 work is heavy, so two at a time.
    maxWorkers: 2,
    minWorkers: 1,
  },
});
