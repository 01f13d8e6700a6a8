/**
 * `npm test` runs every suite with the service's fast paths on, then again with them off the
 * suites whose subject is what the fast paths change: the session's wire form and the reads
 * answered in front of Fastify (`fastPathFolders` in vitest.suites.config.ts: test/auth, sessions,
 * clients, pages, http, health, traffic, fleet, metrics), in the same run as the first pass. The account flows, mail, the CLI, the store,
 * the admin API and webhooks behave alike either way and run once, which keeps `npm test`
 * within its time. `firstPass` lets a suite inside those folders (the mail worker's) run once
 * too.
 */
export const firstPass = process.env.GATEHOUSE_TEST_FAST_PATHS !== 'off';
