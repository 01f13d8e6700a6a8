import { createHash } from 'node:crypto';

/**
 * Auth.js's double-submit CSRF pair, computed as `createCSRFToken` in @auth/core does: the
 * cookie is `token|hash`, the hash SHA-256 of the token and the secret setting, which Auth.js
 * stringifies (several secrets join with commas). The one place Gatehouse computes it: the
 * reads answered without Auth.js, the account wing's CSRF guard and its pages' forms.
 */
export function csrfPairHash(secrets: readonly string[]): (token: string) => string {
  const secret = secrets.join(',');
  return (token) => createHash('sha256').update(`${token}${secret}`).digest('hex');
}
