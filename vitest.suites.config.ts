import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

// `npm run test:suites`: every suite with the fast paths on (the default), and in the same run,
// sharing its workers, the suites whose subject is what the fast paths change again with them
// off (test/helpers/passes.ts): the session's wire form and the reads answered in front of
// Fastify. One run rather than two passes one after the other: the second pass's start-up and
// its last slow file no longer wait on the first's. The flood suites still run after, alone
// (vitest.alone.config.ts).
export const fastPathFolders = [
  'auth',
  'sessions',
  'clients',
  'pages',
  'http',
  'health',
  'traffic',
  'fleet',
  'metrics',
];

// Not `extends`: that would add the folders to vitest.config.ts's include, not replace it.
const suite = {
  include: base.test?.include,
  exclude: base.test?.exclude,
  testTimeout: base.test?.testTimeout,
  hookTimeout: base.test?.hookTimeout,
};

export default defineConfig({
  test: {
    // Measured (docs/development.md): on 2 cores a suite waits far more than it computes (a
    // relay's 31 s, rate windows, mail that must not come), so two at a time left the CPU idle a
    // third of the run; four keep it busy.
    maxWorkers: 4,
    minWorkers: 1,
    projects: [
      { test: { ...suite, name: 'fast paths on' } },
      {
        test: {
          ...suite,
          name: 'fast paths off',
          include: fastPathFolders.map((folder) => `test/${folder}/**/*.test.ts`),
          // It builds the example Next.js app in its own folder: two builds there at once (one a
          // project) break each other, so its fast-paths-off run comes after (package.json).
          exclude: [...(suite.exclude ?? []), 'test/clients/next-auth-client.test.ts'],
          env: { GATEHOUSE_TEST_FAST_PATHS: 'off' },
        },
      },
    ],
  },
});
