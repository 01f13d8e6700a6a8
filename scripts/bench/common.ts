// What every bench file shares: the project's paths, the bench account, the error that means
// "could not measure", the warnings the report prints, and a few small helpers.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startArgs } from '../build/start-command.ts';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const gatehouseMain = path.join(root, 'dist/gatehouse.mjs');
// Started as `npm start` starts it, V8 flags included.
export const gatehouseArgs = startArgs(root);
export const gatehouseCli = path.join(root, 'dist/gatehouse-cli.cjs');
export const baselineMain = path.join(root, 'scripts/bench/baseline.mjs');
/** The runner; its worker roles (`--hash-worker`, `--prober`) run as children of it. */
export const benchMain = path.join(root, 'scripts/bench/main.ts');

export const email = 'bench@example.com';
export const password = 'bench-password-correct-horse';
// Same length as the real one, so the two refusal paths hash inputs of the same size.
export const wrongPassword = 'bench-password-wrong-horse!!';
export const unknownEmail = 'nobody-here@example.com';

/** How long each wrk run lasts, and its warm-up before, in seconds. */
export interface Durations {
  seconds: number;
  warmup: number;
}

/** Environment variables for a child process. */
export type Env = Record<string, string>;

/** A benchmark that could not measure: its figures would be meaningless, so it exits 1. */
export class BenchError extends Error {}

/** Things the report adds under the run's details (other load, a few wrk read errors at shutdown). */
export const warnings: string[] = [];

export const now = (): number => performance.now();
export const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms));
export const log = (message: string): void => {
  process.stderr.write(`[bench] ${message}\n`);
};
/** What a crash prints: the stack when there is one. */
export const describeError = (error: unknown): string =>
  (error as { stack?: string } | null | undefined)?.stack ?? String(error);

export const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** Runs `task` `total` times, at most `concurrency` at once. */
export async function pool(
  total: number,
  concurrency: number,
  task: () => Promise<unknown>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < total) {
      next += 1;
      await task();
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, worker));
}
