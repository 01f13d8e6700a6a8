import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  createSecretKey,
  hkdfSync,
  type KeyObject,
  randomBytes,
  randomUUID,
  timingSafeEqual,
} from 'node:crypto';
import type { JWTDecodeParams, JWTEncodeParams } from '@auth/core/jwt';
import { readCaches } from '../../sessions/caches.js';

/** Options for {@link createJweCodec}. */
export interface JweCodecOptions {
  /** Milliseconds since the epoch; injectable for tests. Defaults to `Date.now`. */
  now?: () => number;
}

type Enc = 'A256CBC-HS512' | 'A256GCM';
type Claims = Record<string, unknown>;
/**
 * A secret's derived key, held as KeyObjects: Node 24 turns a Buffer key into one on every
 * cipher and HMAC, which cost 8 µs more per call here than handing it a KeyObject (9.0 against
 * 1.1 µs for createDecipheriv, 9.5 against 2.5 for createHmac).
 */
interface DerivedKey {
  /** A256CBC-HS512: the HMAC key (the first half). */
  mac: KeyObject;
  /** A256CBC-HS512: the AES key (the second half); A256GCM: the whole key. */
  cipher: KeyObject;
  kid: string;
  header: string; // the protected header encode writes; only used for A256CBC-HS512
}

const DEFAULT_MAX_AGE = 30 * 24 * 60 * 60;
const CLOCK_TOLERANCE = 15;
// Keys derived at most before all are forgotten (src/sessions/caches.ts).
const MAX_CACHED_KEYS = readCaches.derivedKeys.entries;
// Byte lengths per content encryption; Auth.js derives a key of the length `enc` needs.
const SIZES: Record<Enc, { key: number; iv: number; tag: number }> = {
  'A256CBC-HS512': { key: 64, iv: 16, tag: 32 },
  A256GCM: { key: 32, iv: 12, tag: 16 },
};
// jose rejects invalid UTF-8 in the header and claims instead of substituting U+FFFD.
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * base64url exactly as jose decodes it on Node 24 (no `Uint8Array.fromBase64` yet; a runtime
 * that has it makes jose decode strictly, and test/auth/jwe-codec.test.ts's comparison with jose
 * fails until this follows): `+` and `/` are
 * refused, then `atob`'s forgiving rules apply: ASCII whitespace is skipped, and one or two `=`
 * may pad a length that is a multiple of four. A token Auth.js reads with a padded or spaced
 * segment must read here too (the IV, ciphertext and tag are not covered by the tag's AAD), and
 * Buffer.from alone would also skip characters jose refuses.
 */
function b64u(segment: string): Buffer | null {
  if (segment.includes('+') || segment.includes('/')) return null;
  const data = withoutBlanksAndPadding(segment);
  return /^[\w-]*$/.test(data) && data.length % 4 !== 1 ? Buffer.from(data, 'base64url') : null;
}

/** A segment without what b64u skips; b64u reads the result exactly as it reads the segment. */
function withoutBlanksAndPadding(segment: string): string {
  const data = segment.replace(/[\t\n\f\r ]/g, '');
  return data.length % 4 === 0 ? data.replace(/={1,2}$/, '') : data;
}

/**
 * One form for the spellings of a token that decode alike: the IV, ciphertext and tag without
 * the blanks and padding b64u skips. The protected header stays as sent (it is the tag's AAD: a
 * spaced header is another token, one that fails), and so does the encrypted key (it must be
 * empty as sent). So `decode` reads a token and its canonical form alike, and a cache keyed on
 * this form holds one entry for every spaced or padded variant a client makes of one token.
 */
export function canonicalToken(token: string): string {
  // A token as Auth.js writes it has neither: the common case costs one scan.
  if (!/[\t\n\f\r =]/.test(token)) return token;
  const parts = token.split('.');
  if (parts.length !== 5) return token;
  const [header, encryptedKey, ...rest] = parts as [string, string, ...string[]];
  return [header, encryptedKey, ...rest.map(withoutBlanksAndPadding)].join('.');
}

// jose decodes strictly and wants a top-level object, for the header and the claims alike.
function jsonObject(bytes: Buffer): Claims | null {
  try {
    const value: unknown = JSON.parse(utf8.decode(bytes));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Claims)
      : null;
  } catch {
    return null;
  }
}

function secretList(secret: string | string[]): string[] {
  const secrets = Array.isArray(secret) ? secret : [secret];
  // A missing secret is a configuration error, not a bad cookie, so it throws like Auth.js's hkdf.
  if (secrets.length === 0 || secrets.some((s) => typeof s !== 'string' || s === '')) {
    throw new TypeError('JWE codec needs at least one non-empty secret');
  }
  return secrets;
}

function cbcTag(key: KeyObject, aad: Buffer, iv: Buffer, ciphertext: Buffer): Buffer {
  const al = Buffer.alloc(8);
  al.writeBigUInt64BE(BigInt(aad.length * 8));
  const mac = createHmac('sha512', key);
  return mac.update(aad).update(iv).update(ciphertext).update(al).digest().subarray(0, 32);
}

function parse(token: string) {
  const parts = token.split('.');
  if (parts.length !== 5) return null;
  const [h, encryptedKey, ivPart, ctPart, tagPart] = parts;
  // `dir` carries no encrypted key; jose rejects one ("Encountered unexpected JWE Encrypted Key").
  if (encryptedKey !== '') return null;
  const headerBytes = b64u(h);
  const iv = b64u(ivPart);
  const ciphertext = b64u(ctPart);
  const tag = b64u(tagPart);
  if (!headerBytes || !iv || !ciphertext || !tag) return null;
  const header = jsonObject(headerBytes);
  if (!header || header.alg !== 'dir') return null;
  // We recognise no `crit` extension and Auth.js never compresses; jose would inflate a valid DEF
  // token, but only a key holder could mint one, so refusing it costs nothing.
  if (header.crit !== undefined || header.zip !== undefined) return null;
  const enc = header.enc;
  if (enc !== 'A256CBC-HS512' && enc !== 'A256GCM') return null;
  if (iv.length !== SIZES[enc].iv || tag.length !== SIZES[enc].tag) return null;
  return { enc: enc as Enc, kid: header.kid, header, aad: Buffer.from(h), iv, ciphertext, tag };
}

type Parsed = NonNullable<ReturnType<typeof parse>>;

function decrypt(p: Parsed, key: DerivedKey): Buffer | null {
  try {
    if (p.enc === 'A256GCM') {
      const gcm = createDecipheriv('aes-256-gcm', key.cipher, p.iv, { authTagLength: 16 });
      gcm.setAAD(p.aad).setAuthTag(p.tag);
      return Buffer.concat([gcm.update(p.ciphertext), gcm.final()]);
    }
    if (!timingSafeEqual(cbcTag(key.mac, p.aad, p.iv, p.ciphertext), p.tag)) return null;
    const cbc = createDecipheriv('aes-256-cbc', key.cipher, p.iv);
    return Buffer.concat([cbc.update(p.ciphertext), cbc.final()]);
  } catch {
    // GCM tag mismatch or CBC padding error: jose's JWEDecryptionFailed.
    return null;
  }
}

// Mirrors jose's validateClaimsSet under Auth.js's options, where only clockTolerance is set.
function checkClaims(plaintext: Buffer, header: Claims, nowSeconds: number): Claims | null {
  const claims = jsonObject(plaintext);
  if (!claims) return null;
  for (const name of ['iat', 'nbf', 'exp']) {
    if (claims[name] !== undefined && typeof claims[name] !== 'number') return null;
  }
  const { nbf, exp } = claims as { nbf?: number; exp?: number };
  if (nbf !== undefined && nbf > nowSeconds + CLOCK_TOLERANCE) return null;
  if (exp !== undefined && exp <= nowSeconds - CLOCK_TOLERANCE) return null;
  // jwtDecrypt insists that claims replicated into the header agree with the payload.
  const replicated = ['iss', 'sub', 'aud'].filter((name) => header[name] !== undefined);
  if (replicated.some((n) => JSON.stringify(header[n]) !== JSON.stringify(claims[n]))) return null;
  return claims;
}

/** The pair Auth.js accepts as its `jwt: { encode, decode }` option. */
export interface JweCodec {
  encode(params: JWTEncodeParams<Record<string, unknown>>): string;
  decode(params: JWTDecodeParams): Record<string, unknown> | null;
  /** Whether the token's header names the key of `secret` (no decryption; a hint only). */
  sealedWith(token: string, secret: string, salt: string): boolean;
}

/**
 * Synchronous, wire-compatible replacement for Auth.js's `jwt.encode`/`jwt.decode` (`dir` +
 * A256CBC-HS512 JWE, HKDF-SHA256 key per secret and salt, JWK-thumbprint `kid`). Derived keys are
 * cached per codec, so a token costs one cipher and one HMAC, with no key derivation or await.
 *
 * `decode` returns null for every token-driven failure where Auth.js would throw (malformed, wrong
 * or unknown key, tampered, expired). Auth.js's callers treat both as "no session"; the visible
 * differences are that sign-out fires `events.signOut({ token: null })` instead of logging a
 * SignOutError, and that `getLoggedInUser` (a provider's options action asks it), which does not
 * catch, no longer fails. It tries every secret for a token without `kid`, where Auth.js tries only the first, and
 * throws only for a configuration error (no usable secret).
 */
export function createJweCodec(options: JweCodecOptions = {}): JweCodec {
  const clock = options.now ?? (() => Date.now());
  const cache = new Map<string, DerivedKey>();

  function derive(enc: Enc, secret: string, salt: string): DerivedKey {
    // Length-prefixing the salt keeps the cache key unambiguous whatever the strings contain.
    const id = `${enc}|${salt.length}|${salt}|${secret}`;
    let derived = cache.get(id);
    if (derived) return derived;
    const info = `Auth.js Generated Encryption Key (${salt})`;
    const key = Buffer.from(hkdfSync('sha256', secret, salt, info, SIZES[enc].key));
    const jwk = JSON.stringify({ k: key.toString('base64url'), kty: 'oct' });
    const kid = createHash(`sha${key.length * 8}`)
      .update(jwk)
      .digest('base64url');
    const header = Buffer.from(JSON.stringify({ alg: 'dir', enc, kid })).toString('base64url');
    derived = {
      mac: createSecretKey(key.subarray(0, 32)),
      cipher: createSecretKey(enc === 'A256GCM' ? key : key.subarray(32)),
      kid,
      header,
    };
    // Secrets and cookie names come from configuration, so this only guards against misuse.
    if (cache.size >= MAX_CACHED_KEYS) cache.clear();
    cache.set(id, derived);
    return derived;
  }

  function encode(params: JWTEncodeParams<Claims>): string {
    const { token = {}, secret, salt, maxAge = DEFAULT_MAX_AGE } = params;
    const { mac, cipher: aes, header } = derive('A256CBC-HS512', secretList(secret)[0], salt);
    const iat = Math.floor(clock() / 1000);
    const exp = iat + maxAge;
    if (!Number.isFinite(exp)) throw new TypeError('Invalid maxAge');
    const plaintext = Buffer.from(JSON.stringify({ ...token, iat, exp, jti: randomUUID() }));
    const iv = randomBytes(16);
    const cipher = createCipheriv('aes-256-cbc', aes, iv);
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    const tag = cbcTag(mac, Buffer.from(header, 'ascii'), iv, ciphertext);
    return `${header}..${[iv, ciphertext, tag].map((b) => b.toString('base64url')).join('.')}`;
  }

  function decode(params: JWTDecodeParams): Claims | null {
    const { token, secret, salt } = params;
    if (!token || typeof token !== 'string') return null;
    const secrets = secretList(secret);
    const parsed = parse(token);
    if (!parsed) return null;
    for (const candidate of secrets) {
      const key = derive(parsed.enc, candidate, salt);
      // A kid names the one secret to try, as in Auth.js; without one, each secret gets a turn.
      if (parsed.kid !== undefined && parsed.kid !== key.kid) continue;
      const plaintext = decrypt(parsed, key);
      // Once a key authenticates the token, a failed claim check is final.
      if (plaintext) return checkClaims(plaintext, parsed.header, Math.floor(clock() / 1000));
    }
    return null;
  }

  function sealedWith(token: string, secret: string, salt: string): boolean {
    const parsed = parse(token);
    return parsed !== null && parsed.kid === derive(parsed.enc, secret, salt).kid;
  }

  return { encode, decode, sealedWith };
}
