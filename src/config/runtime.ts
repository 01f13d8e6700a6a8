import os from 'node:os';
import * as z from 'zod/mini';
import { oneOf, onOff, wholeNumber } from './read/kinds.js';

const workersProblem = 'must be a whole number from 1 to 256, or auto';

/** Read by several capabilities: production asks more of some of them. */
export const nodeEnv = oneOf(['development', 'production', 'test'], 'development');

/** How the process runs: its mode, its log, its workers, and whether the fast paths are on. */
export const runtime = z.pipe(
  z.object({
    NODE_ENV: nodeEnv,
    LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
    LOG_FORMAT: oneOf(['auto', 'json', 'pretty'], 'auto'),
    WORKERS: z.pipe(
      z._default(
        z.union([z.literal('auto'), wholeNumber(1, 256, workersProblem)], {
          error: workersProblem,
        }),
        1,
      ),
      z.transform((value) => (value === 'auto' ? os.availableParallelism() : value)),
    ),
    FAST_PATHS: onOff(),
  }),
  z.transform((e) => ({
    env: e.NODE_ENV,
    logLevel: e.LOG_LEVEL,
    /**
     * `pretty` lines for a person, or JSON lines; `auto`: pretty in development when standard
     * output is a terminal, else JSON (decided where the log is opened, src/main.ts).
     */
    logFormat: e.LOG_FORMAT,
    workers: e.WORKERS,
    fastPaths: e.FAST_PATHS,
  })),
);
