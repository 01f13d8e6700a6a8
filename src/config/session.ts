import * as z from 'zod/mini';
import { integer } from './read/kinds.js';

const tenYearsSeconds = 10 * 365 * 86400;

/** How long a session lives, how often its cookie is re-issued, and how many a user holds. */
export const session = z.pipe(
  z
    .object({
      SESSION_MAX_AGE: integer(60, tenYearsSeconds, 30 * 86400),
      SESSION_UPDATE_AGE: integer(0, tenYearsSeconds, 86400),
      SESSION_ABSOLUTE_MAX_AGE: integer(60, tenYearsSeconds, 90 * 86400),
      SESSIONS_PER_USER_MAX: integer(1, 100_000, 100),
    })
    .check(
      z.superRefine((e, ctx) => {
        if (e.SESSION_ABSOLUTE_MAX_AGE < e.SESSION_MAX_AGE) {
          ctx.addIssue({
            code: 'custom',
            path: ['SESSION_ABSOLUTE_MAX_AGE'],
            message: 'must be at least SESSION_MAX_AGE',
          });
        }
      }),
    ),
  z.transform((e) => ({
    session: {
      /** Sliding: each re-issued cookie lives this long from its issue. */
      maxAgeSeconds: e.SESSION_MAX_AGE,
      updateAgeSeconds: e.SESSION_UPDATE_AGE,
      /** Counted from sign-in, whatever the sliding age says. */
      absoluteMaxAgeSeconds: e.SESSION_ABSOLUTE_MAX_AGE,
    },
    /** Live sessions per user; signing in past it ends the oldest. */
    sessionsPerUserMax: e.SESSIONS_PER_USER_MAX,
  })),
);
