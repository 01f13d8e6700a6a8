import os from 'node:os';
import * as z from 'zod/mini';
import { onOff } from './kinds.js';

/** Read by several capabilities: production asks more of some of them. */
export const nodeEnv = z._default(z.enum(['development', 'production', 'test']), 'development');

/** How the process runs: its mode, its log, its workers, and whether the fast paths are on. */
export const runtime = z.pipe(
  z.object({
    NODE_ENV: nodeEnv,
    LOG_LEVEL: z._default(
      z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
      'info',
    ),
    WORKERS: z.pipe(
      z._default(
        z.union([
          z.literal('auto'),
          z.coerce.number().check(z.int(), z.minimum(1), z.maximum(256)),
        ]),
        1,
      ),
      z.transform((value) => (value === 'auto' ? os.availableParallelism() : value)),
    ),
    FAST_PATHS: onOff(),
  }),
  z.transform((e) => ({
    env: e.NODE_ENV,
    logLevel: e.LOG_LEVEL,
    workers: e.WORKERS,
    fastPaths: e.FAST_PATHS,
  })),
);
