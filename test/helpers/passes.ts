/**
 * `npm test` runs every suite twice, with the service's fast paths on and then off
 * (`test:suites` in package.json). A suite whose subject never goes through a fast path (the
 * mail worker, its queue order) proves nothing new the second time: it runs in the first pass
 * only, which keeps `npm test` within its time.
 */
export const firstPass = process.env.GATEHOUSE_TEST_FAST_PATHS !== 'off';
