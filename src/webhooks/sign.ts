import { createHmac } from 'node:crypto';

/** The bytes of a `whsec_<base64>` secret (checked by src/config/webhooks.ts). */
export function secretBytes(secret: string): Buffer {
  return Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
}

/**
 * The Standard Webhooks headers for one attempt: `webhook-signature` is `v1,` and the base64
 * HMAC-SHA256, keyed by the secret's bytes, of `id.timestamp.body`. The timestamp is the
 * attempt's (seconds), so a receiver's replay window holds for a retry a day later too.
 */
export function signedHeaders(
  secret: Buffer,
  eventId: string,
  body: string,
  nowMs: number,
): Record<string, string> {
  const timestamp = String(Math.floor(nowMs / 1000));
  const signature = createHmac('sha256', secret)
    .update(`${eventId}.${timestamp}.${body}`)
    .digest('base64');
  return {
    'content-type': 'application/json',
    'webhook-id': eventId,
    'webhook-timestamp': timestamp,
    'webhook-signature': `v1,${signature}`,
  };
}
