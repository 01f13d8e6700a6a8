import * as z from 'zod/mini';
import { port } from './http.js';
import { metricsPort } from './metrics.js';
import { optionalText } from './read/kinds.js';
import { noted } from './read/notes.js';

/** Empty means unset (platforms often cannot unset a variable). */
const optionalPort = z.pipe(
  z.optional(
    z.string().check(
      z.regex(/^(|[1-9][0-9]{0,4})$/, 'must be a port number from 1 to 65535, or empty'),
      z.refine((value) => value === '' || Number(value) <= 65535, 'must be at most 65535'),
    ),
  ),
  z.transform((value) => (value === undefined || value === '' ? undefined : Number(value))),
);

/**
 * The admin API (src/admin/) on a listener of its own; off unless ADMIN_PORT is set. The token
 * file is only named here: it is read when the listener starts, and again whenever it changes
 * (a token added before the old one is removed), so rotation needs no restart.
 */
export const admin = z.pipe(
  z
    .object({
      PORT: port,
      METRICS_PORT: metricsPort,
      ADMIN_PORT: noted(optionalPort, { example: '9100' }),
      ADMIN_HOST: noted(optionalText(), { default: '`127.0.0.1`', example: '10.0.0.5' }),
      ADMIN_TOKEN_FILE: noted(optionalText(), { example: '/run/secrets/gatehouse-admin-tokens' }),
    })
    .check(
      z.superRefine((e, ctx) => {
        if (e.ADMIN_PORT === undefined) {
          for (const name of ['ADMIN_HOST', 'ADMIN_TOKEN_FILE'] as const) {
            if (e[name] !== undefined)
              ctx.addIssue({
                code: 'custom',
                path: [name],
                message:
                  'is set but ADMIN_PORT is not: set ADMIN_PORT to turn the admin API on, e.g. ADMIN_PORT=9100',
              });
          }
          return;
        }
        if (e.ADMIN_PORT === e.PORT)
          ctx.addIssue({
            code: 'custom',
            path: ['ADMIN_PORT'],
            message: 'must differ from PORT: the admin API is never served on the public listener',
          });
        if (e.ADMIN_PORT === e.METRICS_PORT)
          ctx.addIssue({
            code: 'custom',
            path: ['ADMIN_PORT'],
            message: 'must differ from METRICS_PORT: each listener has a port of its own',
          });
      }),
    ),
  z.transform((e) => ({
    /** Undefined unless ADMIN_PORT is set. No token file: the listener does not start (it says so). */
    admin:
      e.ADMIN_PORT === undefined
        ? undefined
        : { port: e.ADMIN_PORT, host: e.ADMIN_HOST ?? '127.0.0.1', tokenFile: e.ADMIN_TOKEN_FILE },
  })),
);
