import * as z from 'zod/mini';
import { integer } from './read/kinds.js';

/** What a sign-in must bring, and how many attempts and failures it may cost. */
export const signIn = z.pipe(
  z.object({
    PASSWORD_MIN_LENGTH: integer(8, 1024, 12),
    THROTTLE_EMAIL_MAX_FAILURES: integer(1, 1_000_000, 10),
    THROTTLE_IP_MAX_FAILURES: integer(1, 1_000_000, 100),
    THROTTLE_EMAIL_MAX_ATTEMPTS: integer(1, 1_000_000, 50),
    THROTTLE_IP_MAX_ATTEMPTS: integer(1, 1_000_000, 300),
    THROTTLE_WINDOW_SECONDS: integer(1, 86400, 900),
    THROTTLE_LOCK_SECONDS: integer(1, 86400, 900),
  }),
  z.transform((e) => ({
    passwordMinLength: e.PASSWORD_MIN_LENGTH,
    throttle: {
      emailMaxFailures: e.THROTTLE_EMAIL_MAX_FAILURES,
      emailMaxAttempts: e.THROTTLE_EMAIL_MAX_ATTEMPTS,
      ipMaxAttempts: e.THROTTLE_IP_MAX_ATTEMPTS,
      ipMaxFailures: e.THROTTLE_IP_MAX_FAILURES,
      windowSeconds: e.THROTTLE_WINDOW_SECONDS,
      lockSeconds: e.THROTTLE_LOCK_SECONDS,
    },
  })),
);
