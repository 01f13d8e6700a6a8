import { createHash } from 'node:crypto';
import { decode, encode } from '@auth/core/jwt';
import { serializeCookie } from '../../auth/cookies/cookies.js';

/*
 * The WebAuthn challenge rides in Auth.js's own challenge cookie (`authjs.challenge`, or
 * `__Secure-authjs.challenge` over https), sealed exactly as Auth.js seals it
 * (`webauthnChallenge` in @auth/core's lib/actions/callback/oauth/checks.ts): an encrypted
 * `{challenge, registerData}` under the salt `encodedWebauthnChallenge`, inside an encrypted
 * `{value, provider: "passkey"}` under the cookie's name. It binds the ceremony to the browser
 * that asked for the options; the store's record of answered challenges makes it single use.
 */

/** How long a ceremony may take: the options' `timeout` and the cookie's life (Auth.js: 5 min). */
export const challengeTtlSeconds = 5 * 60;
const innerSalt = 'encodedWebauthnChallenge';
const providerId = 'passkey';

export const challengeCookieName = (secure: boolean) =>
  `${secure ? '__Secure-' : ''}authjs.challenge`;

/** Who a registration challenge was issued to (Auth.js's `registerData`). */
export interface RegisterData {
  id: string;
  email: string;
  name: string;
}

export interface ChallengePayload {
  challenge: string;
  registerData?: RegisterData;
}

/** `Set-Cookie` carrying `payload` for `challengeTtlSeconds`. */
export async function sealChallenge(
  secrets: readonly string[],
  secure: boolean,
  payload: ChallengePayload,
  now: number,
): Promise<string> {
  const name = challengeCookieName(secure);
  const inner = await encode({
    secret: [...secrets],
    salt: innerSalt,
    maxAge: challengeTtlSeconds,
    token: { ...payload },
  });
  const value = await encode({
    secret: [...secrets],
    salt: name,
    maxAge: challengeTtlSeconds,
    token: { value: inner, provider: providerId },
  });
  return serializeCookie(name, value, {
    secure,
    expires: new Date(now + challengeTtlSeconds * 1000),
  });
}

/** The challenge a cookie holds, or null when it is missing, forged, stale or another's. */
export async function openChallenge(
  secrets: readonly string[],
  secure: boolean,
  cookieValue: string | undefined,
): Promise<ChallengePayload | null> {
  if (cookieValue === undefined || cookieValue === '') return null;
  const name = challengeCookieName(secure);
  try {
    const outer = await decode({ secret: [...secrets], salt: name, token: cookieValue });
    if (outer?.provider !== providerId || typeof outer.value !== 'string') return null;
    const inner = await decode({ secret: [...secrets], salt: innerSalt, token: outer.value });
    if (typeof inner?.challenge !== 'string') return null;
    const registerData = inner.registerData as RegisterData | undefined;
    return { challenge: inner.challenge, ...(registerData !== undefined && { registerData }) };
  } catch {
    // Unreadable (another secret, tampered, expired): no challenge.
    return null;
  }
}

/** `Set-Cookie` clearing the challenge cookie, as Auth.js clears it after use. */
export const clearChallenge = (secure: boolean) =>
  serializeCookie(challengeCookieName(secure), '', { secure, expires: new Date(0) });

/** What the store keeps of an answered challenge: its digest, never the challenge. */
export const challengeDigest = (challenge: string) =>
  createHash('sha256').update(challenge).digest('base64url');
