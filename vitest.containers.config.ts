import path from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import ContainersReporter from './test/containers/reporter.ts';

// The container checks (test/containers/): run by scripts/containers.sh, as root, against the
// private Docker engine it starts and the image it built (GATEHOUSE_IMAGE). Never part of
// `npm test`. One file at a time, in this order (the image alone, then compose, then several
// containers and the pod template): they share the engine, and each file's checks build on
// each other's state in order.
const order = ['image', 'compose', 'kubernetes'];

class InOrder extends BaseSequencer {
  override sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) =>
      order.indexOf(path.basename(file.moduleId, '.test.ts'));
    return Promise.resolve([...files].sort((a, b) => rank(a) - rank(b)));
  }
}

export default defineConfig({
  test: {
    include: ['test/containers/**/*.test.ts'],
    fileParallelism: false,
    sequence: { sequencer: InOrder },
    testTimeout: 300_000,
    hookTimeout: 120_000,
    reporters: ['default', new ContainersReporter()],
  },
});
