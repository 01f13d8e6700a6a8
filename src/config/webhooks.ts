import * as z from 'zod/mini';
import { hasCredentials, redactedUrl } from '../util/redacted-url.js';
import { integer, trimmedText } from './read/kinds.js';
import { noted } from './read/notes.js';

function isEndpoint(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.hostname !== '';
  } catch {
    // Not a URL: refused with the message.
    return false;
  }
}

/** Shortest secret taken, in bytes: HMAC-SHA256 keys shorter than this are guessable sooner. */
export const webhookSecretMinBytes = 24;

/** The bytes of a `whsec_<base64>` secret, or undefined when it is not one. */
export function webhookSecretBytes(value: string): Buffer | undefined {
  const match = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(value);
  if (match === null) return undefined;
  const bytes = Buffer.from(match[1] as string, 'base64');
  return bytes.length >= webhookSecretMinBytes ? bytes : undefined;
}

/**
 * Signed webhooks (src/webhooks/): the endpoints (space-separated) and the Standard Webhooks
 * secret, `whsec_` and the base64 of at least 24 random bytes (WEBHOOK_SECRET_FILE reads it
 * from a file, src/config/read/secret-files.ts). Problems never repeat the secret.
 */
export const webhooks = z.pipe(
  z
    .object({
      WEBHOOK_URL: noted(trimmedText(), {
        default: 'none (off)',
        example: 'https://app.example.com/hooks/gatehouse',
      }),
      WEBHOOK_SECRET: noted(trimmedText(), { example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }),
      // The first retry's delay; each further one doubles, up to an hour.
      WEBHOOK_RETRY_SECONDS: integer(1, 3600, 30),
    })
    .check(
      z.superRefine((e, ctx) => {
        const urls = e.WEBHOOK_URL?.split(/\s+/) ?? [];
        if (urls.some((url) => !isEndpoint(url)))
          ctx.addIssue({
            code: 'custom',
            path: ['WEBHOOK_URL'],
            message: 'must be one or more http(s) URLs, separated by spaces',
          });
        // fetch refuses a URL with credentials, so every delivery would fail, and each attempt's
        // warning would carry the password. The message shows the URL with them masked.
        const withCredentials = urls.filter(hasCredentials);
        if (withCredentials.length > 0)
          ctx.addIssue({
            code: 'custom',
            path: ['WEBHOOK_URL'],
            message: `must not carry a user name or password (${withCredentials.map(redactedUrl).join(' ')}): such a URL is never delivered to; the receiver checks each delivery's signature (WEBHOOK_SECRET) instead, e.g. WEBHOOK_URL=https://app.example.com/hooks/gatehouse`,
          });
        if (e.WEBHOOK_SECRET !== undefined && webhookSecretBytes(e.WEBHOOK_SECRET) === undefined)
          ctx.addIssue({
            code: 'custom',
            path: ['WEBHOOK_SECRET'],
            message: `must be whsec_ and the base64 of at least ${webhookSecretMinBytes} random bytes, e.g. WEBHOOK_SECRET=whsec_$(openssl rand -base64 32)`,
          });
        if (urls.length > 0 && e.WEBHOOK_SECRET === undefined)
          ctx.addIssue({
            code: 'custom',
            path: ['WEBHOOK_SECRET'],
            message:
              'is required with WEBHOOK_URL: every delivery is signed, e.g. WEBHOOK_SECRET=whsec_$(openssl rand -base64 32) (or WEBHOOK_SECRET_FILE)',
            params: { example: false },
          });
        if (urls.length === 0 && e.WEBHOOK_SECRET !== undefined)
          ctx.addIssue({
            code: 'custom',
            path: ['WEBHOOK_SECRET'],
            message:
              'is set but WEBHOOK_URL is not: set WEBHOOK_URL to send webhooks, e.g. WEBHOOK_URL=https://app.example.com/hooks/gatehouse',
          });
      }),
    ),
  z.transform((e) => ({
    /** Undefined unless WEBHOOK_URL is set. */
    webhooks:
      e.WEBHOOK_URL === undefined
        ? undefined
        : {
            endpoints: [...new Set(e.WEBHOOK_URL.split(/\s+/))],
            /** `whsec_<base64>`, checked above; a Buffer would not survive the config's freeze. */
            secret: e.WEBHOOK_SECRET ?? '',
            retryBaseSeconds: e.WEBHOOK_RETRY_SECONDS,
          },
  })),
);
