// The fleet's scenarios. Each returns what it observed (figures and raw readings), never a
// verdict: `problems(result)` next to each says what would be wrong, for test/fleet/cli.ts;
// test/fleet/fleet.test.ts asserts on the same readings with its own expectations.
export { crossRead, revocation, throttle } from './sessions.ts';
export { kill9, postgresRestart, rollingRestart } from './disruptions.ts';
export type { Scenario } from './scenario.ts';
