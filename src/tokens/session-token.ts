import { randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
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
  const token = await new SignJWT({
    sid: subject.sid,
    email: subject.email,
    name: subject.name,
    auth_time: Math.floor(subject.authTimeMs / 1000),
    amr: subject.amr,
  })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' })
    .setIssuer(place.issuer)
    .setAudience(place.audience)
    .setSubject(subject.userId)
    .setIssuedAt(nowSeconds)
    .setExpirationTime(exp)
    .setJti(randomBytes(16).toString('base64url'))
    .sign(key.privateKey);
  return { token, expires: new Date(exp * 1000).toISOString() };
}
