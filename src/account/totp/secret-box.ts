import { createHash, createHmac, hkdfSync } from 'node:crypto';
import { gcmOpen, gcmSeal } from '../../util/aes-gcm.js';

/*
 * TOTP secrets at rest: AES-256-GCM under a key of their own (FACTOR_KEY, never AUTH_SECRET in
 * production), each box naming the key that sealed it so keys can be rotated (list the new key
 * first, keep the old one until every secret was re-sealed or re-enrolled), and bound to its
 * user by the additional data, so a box copied onto another account's row does not open.
 */

interface Key {
  id: string;
  key: Buffer;
}

const version = 'v1';

/** A key of 256 bits from the operator's string (any length ≥ 32 bytes), and its public id. */
function keyOf(secret: string, label: string): Key {
  const key = Buffer.from(hkdfSync('sha256', secret, '', label, 32));
  const id = createHash('sha256').update(key).digest('base64url').slice(0, 8);
  return { id, key };
}

/**
 * The box's additional data: its user, and for a replacement's pending secret the sealed secret
 * it replaces, so only a set-up that proved that secret made a box that opens as its successor.
 */
const aad = (userId: string, replacing?: string) =>
  Buffer.from(
    `gatehouse totp secret for ${userId}${replacing === undefined ? '' : ` replacing ${replacing}`}`,
  );

export interface SecretBox {
  /** Whether a key is there to seal with: without one TOTP cannot be set up or checked. */
  readonly usable: boolean;
  /**
   * `replacing`: the sealed active secret a replacement's set-up proved (src/account/totp/
   * setup.ts); the box then opens only with the same value.
   */
  seal(userId: string, secret: string, replacing?: string): string;
  /**
   * The secret, or null when no listed key opens the box (a removed key, a moved row, or a
   * `replacing` other than the one it was sealed with).
   */
  open(userId: string, sealed: string, replacing?: string): string | null;
  /**
   * HMAC-SHA-256 of `data` under a key derived from the current key with `label` of its own
   * (never the sealing key itself): a value only the server can compute from `data`.
   */
  mac(label: string, data: string): Buffer;
}

/**
 * The box over `keys` (current first). `derivedFrom` stands in when there is no FACTOR_KEY in
 * development: a key derived from the auth secret under a label of its own.
 */
export function createSecretBox(keys: readonly string[], derivedFrom?: string): SecretBox {
  const ring = keys.map((secret) => keyOf(secret, 'gatehouse factor key v1'));
  if (ring.length === 0 && derivedFrom !== undefined)
    ring.push(keyOf(derivedFrom, 'gatehouse development factor key v1'));
  const current = ring[0];
  const source = keys[0] ?? derivedFrom;
  return {
    usable: current !== undefined,
    seal(userId, secret, replacing) {
      if (current === undefined) throw new Error('no FACTOR_KEY to seal a second factor with');
      const { iv, body } = gcmSeal(current.key, aad(userId, replacing), secret);
      return [version, current.id, iv.toString('base64url'), body.toString('base64url')].join('.');
    },
    mac(label, data) {
      if (current === undefined || source === undefined)
        throw new Error('no FACTOR_KEY to derive a second factor with');
      const key = Buffer.from(hkdfSync('sha256', source, '', `gatehouse ${label}`, 32));
      return createHmac('sha256', key).update(data).digest();
    },
    open(userId, sealed, replacing) {
      const [v, id, iv, body] = sealed.split('.');
      const key = ring.find((candidate) => candidate.id === id);
      if (v !== version || key === undefined || iv === undefined || body === undefined) return null;
      return gcmOpen(
        key.key,
        aad(userId, replacing),
        Buffer.from(iv, 'base64url'),
        Buffer.from(body, 'base64url'),
      );
    },
  };
}
