// The container checks' own lines, as scripts/containers.sh has always printed them and people
// read them: `PASS name (seconds s): detail` or `FAIL name: why` as each check ends, then the
// figures the checks recorded and `containers: N passed, N failed`.
import type { Reporter, TestCase, TestModule } from 'vitest/node';

export default class ContainersReporter implements Reporter {
  private passed = 0;
  private failed = 0;
  private readonly figures: Record<string, unknown> = {};

  onTestCaseResult(testCase: TestCase): void {
    const result = testCase.result();
    const meta = testCase.meta();
    Object.assign(this.figures, meta.figures);
    if (result.state === 'passed') {
      this.passed += 1;
      const seconds = ((testCase.diagnostic()?.duration ?? 0) / 1000).toFixed(1);
      const detail = meta.detail ? `: ${meta.detail}` : '';
      process.stdout.write(`PASS ${testCase.name} (${seconds} s)${detail}\n`);
    } else if (result.state === 'failed') {
      this.failed += 1;
      const why = result.errors.map((error) => error.message).join('; ');
      process.stdout.write(`FAIL ${testCase.name}: ${why}\n`);
    }
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    // A file that could not run at all (its setup threw) counts as one failed check.
    for (const testModule of testModules) {
      if (testModule.state() === 'failed' && testModule.errors().length > 0) this.failed += 1;
    }
    process.stdout.write(`\nfigures: ${JSON.stringify(this.figures)}\n`);
    process.stdout.write(`containers: ${this.passed} passed, ${this.failed} failed\n`);
  }
}
