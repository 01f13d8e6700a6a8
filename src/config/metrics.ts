import * as z from 'zod/mini';
import { port, requestTimeout } from './http.js';
import { noted } from './read/notes.js';

/** Read by the admin API too: its listener must be another port. Empty means unset. */
export const metricsPort = noted(
  z.pipe(
    z.optional(
      z.string().check(
        z.regex(/^(|[1-9][0-9]{0,4})$/, 'must be a port number from 1 to 65535, or empty'),
        z.refine((value) => value === '' || Number(value) <= 65535, 'must be at most 65535'),
      ),
    ),
    z.transform((value) => (value === undefined || value === '' ? undefined : Number(value))),
  ),
  { example: '9464' },
);

/** Prometheus metrics on a listener of their own; off unless METRICS_PORT is set. */
export const metrics = z.pipe(
  z
    .object({
      PORT: port,
      REQUEST_TIMEOUT_MS: requestTimeout,
      // Empty means unset (platforms often cannot unset a variable): metrics off.
      METRICS_PORT: metricsPort,
      METRICS_HOST: noted(
        z.pipe(
          z.optional(z.string()),
          z.transform((value) => (value === '' ? undefined : value)),
        ),
        { default: '`127.0.0.1`', example: '0.0.0.0' },
      ),
    })
    .check(
      z.superRefine((e, ctx) => {
        if (e.METRICS_PORT === undefined && e.METRICS_HOST !== undefined) {
          ctx.addIssue({
            code: 'custom',
            path: ['METRICS_HOST'],
            message:
              'is set but METRICS_PORT is not: set METRICS_PORT to turn metrics on, e.g. METRICS_PORT=9464',
          });
        }
        if (e.METRICS_PORT !== undefined && e.METRICS_PORT === e.PORT) {
          ctx.addIssue({
            code: 'custom',
            path: ['METRICS_PORT'],
            message: 'must differ from PORT: metrics are served on a listener of their own',
          });
        }
      }),
    ),
  z.transform((e) => ({
    /** Undefined unless METRICS_PORT is set. Its listener times requests as the public one does. */
    metrics:
      e.METRICS_PORT === undefined
        ? undefined
        : {
            port: e.METRICS_PORT,
            host: e.METRICS_HOST ?? '127.0.0.1',
            requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
          },
  })),
);
