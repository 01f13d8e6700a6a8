import type { Fleet } from './fleet.ts';

/**
 * A scenario: runs against a fleet and returns what it observed (figures and raw readings),
 * never a verdict. `problems(result)` says in words what would be wrong, for the CLI; the test
 * asserts on the same readings with its own expectations.
 */
export type Scenario<Result, Options = never> = ((
  fleet: Fleet,
  options?: Options,
) => Promise<Result>) & {
  /** What would be wrong with the result, in words; empty when it is as expected. */
  problems(result: Result): string[];
};

export function scenario<Result, Options = never>(
  run: (fleet: Fleet, options?: Options) => Promise<Result>,
  problems: (result: Result) => string[],
): Scenario<Result, Options> {
  return Object.assign(run, { problems });
}
