import { randomBytes, sign } from 'node:crypto';
import type { SigningKeyMaterial } from '../util/signing-key-material.js';
import type { KeyRing } from './key-ring.js';

/** Who a token speaks for, and how they proved it. */
export interface TokenSubject {
  userId: string;
  email: string;
  name: string;
  /** The session's public id, or the access token's id (`pat_…`). */
  sid: string;
  /** When the session (or the access token) was made, epoch ms. */
  authTimeMs: number;
  /** How, in RFC 8176's words where there is one (`pwd`, `otp`, `hwk`, …). */
  amr: string[];
  /** The token may not outlive this (the session's absolute cap, the access token's expiry). */
  notAfterMs: number | null;
}

/** A session's proofs (`password`, `otp`, `passkey`, …) in RFC 8176's words. */
const amrWords: Record<string, string> = {
  password: 'pwd',
  otp: 'otp',
  recovery_code: 'otp',
  passkey: 'hwk',
  user_verification: 'user',
};

export function amrOf(proofs: readonly string[]): string[] {
  const words = [...new Set(proofs.map((proof) => amrWords[proof] ?? proof))];
  const factors = new Set(proofs.filter((proof) => proof !== 'user_verification'));
  return factors.size > 1 ? [...words, 'mfa'] : words;
}

const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

/**
 * An ECDSA signature as OpenSSL gives it (DER: a SEQUENCE of the INTEGERs r and s) as JWS wants
 * it (r‖s, 32 bytes each for P-256). Throws on anything else: only node:crypto's own output
 * comes here.
 */
export function derToJose(der: Buffer): Buffer {
  const bad = () => new Error('not a DER ECDSA signature');
  if (der[0] !== 0x30) throw bad();
  let at = (der[1] ?? 0) & 0x80 ? 2 + ((der[1] ?? 0) & 0x7f) : 2;
  const out = Buffer.alloc(64);
  for (const half of [0, 1]) {
    const length = der[at + 1] ?? 0;
    if (der[at] !== 0x02) throw bad();
    let int = der.subarray(at + 2, at + 2 + length);
    while (int.length > 32 && int[0] === 0) int = int.subarray(1);
    if (int.length > 32 || int.length === 0) throw bad();
    int.copy(out, half * 32 + 32 - int.length);
    at += 2 + length;
  }
  if (at !== der.length) throw bad();
  return out;
}

/**
 * A JWS in compact form (RFC 7515) over our own claims, signed with node:crypto on the event
 * loop: by hand because jose's signing goes through WebCrypto's promise (76 µs a token here),
 * and node:crypto's own P1363 option costs 17 µs more than the DER it converts (34 against 17
 * µs measured); the checking of tokens that arrive (introspection) stays jose's.
 */
function signCompact(header: object, claims: object, key: SigningKeyMaterial): string {
  const input = Buffer.from(`${part(header)}.${part(claims)}`);
  const signature =
    key.alg === 'ES256'
      ? derToJose(sign('sha256', input, key.privateKey))
      : sign(null, input, key.privateKey);
  return `${input.toString()}.${signature.toString('base64url')}`;
}

export interface MintSettings {
  ring: KeyRing;
  ttlSeconds: number;
  now: () => number;
}

/** A signed JWT for `subject`: `{token, expires}`, `expires` as an ISO time. */
export async function mintSessionToken(
  settings: MintSettings,
  subject: TokenSubject,
  place: { issuer: string; audience: string },
): Promise<{ token: string; expires: string }> {
  const key = await settings.ring.signer();
  const nowSeconds = Math.floor(settings.now() / 1000);
  let exp = nowSeconds + settings.ttlSeconds;
  if (subject.notAfterMs !== null) exp = Math.min(exp, Math.floor(subject.notAfterMs / 1000));
  const header = { alg: key.alg, kid: key.kid, typ: 'JWT' };
  const claims = {
    iss: place.issuer,
    aud: place.audience,
    sub: subject.userId,
    sid: subject.sid,
    email: subject.email,
    name: subject.name,
    auth_time: Math.floor(subject.authTimeMs / 1000),
    amr: subject.amr,
    iat: nowSeconds,
    exp,
    jti: randomBytes(16).toString('base64url'),
  };
  const token = signCompact(header, claims, key);
  return { token, expires: new Date(exp * 1000).toISOString() };
}
