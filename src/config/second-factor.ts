import * as z from 'zod/mini';
import { list } from './read/kinds.js';
import { noted } from './read/notes.js';
import { nodeEnv } from './runtime.js';

const minKeyBytes = 32;
const keyAdvice = 'generate one with: openssl rand -base64 33';

/**
 * Second factors (TOTP and its recovery codes): whether people may enrol (`optional`), must
 * (`required`), or may not (`off`), and the key their TOTP secrets are encrypted under.
 *
 * Unset, SECOND_FACTOR is `optional` wherever there is a key (and in development, where a key
 * is derived from the auth secret); production without FACTOR_KEY has them off, as it has mail
 * off without SMTP_URL, so an upgrade does not stop a running service. Asking for them in
 * production (`optional` or `required`) without a key stops start-up, naming FACTOR_KEY.
 * Off never lowers an account's assurance: an account that enrolled still needs its factor.
 */
export const factors = z.pipe(
  z
    .object({
      NODE_ENV: nodeEnv,
      SECOND_FACTOR: noted(
        z.optional(
          z.enum(['off', 'optional', 'required'], {
            error: 'must be one of off, optional, required',
          }),
        ),
        { default: 'optional (off in production without FACTOR_KEY)', example: 'optional' },
      ),
      // Or FACTOR_KEY_FILE (src/config/read/secret-files.ts). Comma-separated: the first encrypts,
      // every one decrypts (rotation).
      FACTOR_KEY: noted(
        list().check(
          z.refine(
            (keys) => keys.every((key) => Buffer.byteLength(key) >= minKeyBytes),
            `each comma-separated key must be at least ${minKeyBytes} bytes; ${keyAdvice}`,
          ),
        ),
        { default: 'derived from the auth secret in development' },
      ),
    })
    .check(
      z.superRefine((e, ctx) => {
        if (e.NODE_ENV !== 'production' || e.FACTOR_KEY.length > 0) return;
        if (e.SECOND_FACTOR === 'optional' || e.SECOND_FACTOR === 'required') {
          ctx.addIssue({
            code: 'custom',
            path: ['FACTOR_KEY'],
            message: `is required in production with SECOND_FACTOR=${e.SECOND_FACTOR} (at least ${minKeyBytes} bytes, not AUTH_SECRET; ${keyAdvice})`,
          });
        }
      }),
    ),
  z.transform((e) => ({
    secondFactor: {
      /** off: no enrolment (the routes answer 404); required: every user must enrol. */
      mode:
        e.SECOND_FACTOR ??
        (e.NODE_ENV === 'production' && e.FACTOR_KEY.length === 0 ? 'off' : 'optional'),
      /** Current key first; the others still decrypt during a rotation. Empty: none given. */
      keys: e.FACTOR_KEY,
    } as { mode: SecondFactorMode; keys: string[] },
  })),
);

/** SECOND_FACTOR, resolved. */
export type SecondFactorMode = 'off' | 'optional' | 'required';
