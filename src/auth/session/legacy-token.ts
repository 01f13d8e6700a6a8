import { createDecipheriv, createHash, hkdfSync } from 'node:crypto';
import { expClockToleranceSeconds } from './token-claims.js';
import type { JweCodec } from './jwe-codec.js';

/*
 * The session cookies of the Auth.js app a deployment replaces (adoption spec §3), read with its
 * old secrets: Auth.js v5's `authjs.session-token` (`__Secure-` over https), a JWE sealed with a
 * key derived from the secret and the cookie's name, as Gatehouse's own tokens are; and NextAuth
 * v4's `next-auth.session-token`, a `dir` + A256GCM JWE under a key derived from the secret
 * alone. Either may be split into `.0`, `.1`… chunks.
 */

const v5Names = [
  '__Secure-authjs.session-token',
  '__Host-authjs.session-token',
  'authjs.session-token',
];
const v4Names = ['__Secure-next-auth.session-token', 'next-auth.session-token'];

/** An old session cookie a request holds: its name, its token (chunks joined), the cookies it came in. */
export interface LegacyCookie {
  name: string;
  version: 'v5' | 'v4';
  token: string;
  cookieNames: string[];
}

/** Who an old token names and until when it holds. */
export interface LegacyClaims {
  userId: string;
  /** Epoch milliseconds. */
  expiresAtMs: number;
  /** SHA-256 of the token, hex: the one key it is ever exchanged under. */
  tokenHash: string;
}

/** Whether a cookie header may carry a NextAuth v4 session (v5's share Gatehouse's name). */
export const mayHoldV4 = (cookieHeader: string | undefined): boolean =>
  cookieHeader !== undefined && cookieHeader.includes('next-auth.session-token');

/** The session cookies of each kind a request holds, chunks joined in Auth.js's order. */
export function legacyCookiesIn(cookies: Map<string, string>): LegacyCookie[] {
  const found: LegacyCookie[] = [];
  for (const [names, version] of [
    [v5Names, 'v5'],
    [v4Names, 'v4'],
  ] as const) {
    for (const name of names) {
      const parts = [...cookies]
        .filter(
          ([cookie, value]) =>
            value !== '' &&
            (cookie === name ||
              (/^\.\d+$/.test(cookie.slice(name.length)) && cookie.startsWith(name))),
        )
        .sort(([a], [b]) => chunkIndex(a) - chunkIndex(b));
      if (parts.length > 0)
        found.push({
          name,
          version,
          token: parts.map(([, value]) => value).join(''),
          cookieNames: parts.map(([cookie]) => cookie),
        });
    }
  }
  return found;
}

const chunkIndex = (name: string) => {
  const suffix = /\.(\d+)$/.exec(name);
  return suffix === null ? -1 : Number(suffix[1]);
};

/**
 * What an old cookie's token says, when it opens under one of `secrets`, names a user (`sub`, or
 * `id`), is not a Gatehouse session's (no `sid`) and has not expired; else null.
 */
export function openLegacyToken(
  cookie: LegacyCookie,
  secrets: readonly string[],
  codec: JweCodec,
  nowMs: number,
): LegacyClaims | null {
  const payload =
    cookie.version === 'v5'
      ? codec.decode({ token: cookie.token, secret: [...secrets], salt: cookie.name })
      : openV4(cookie.token, secrets);
  if (payload === null || payload.sid !== undefined) return null;
  const userId = typeof payload.sub === 'string' && payload.sub !== '' ? payload.sub : payload.id;
  const exp = payload.exp;
  if (typeof userId !== 'string' || userId === '' || typeof exp !== 'number') return null;
  if (exp + expClockToleranceSeconds <= nowMs / 1000) return null;
  return {
    userId,
    expiresAtMs: exp * 1000,
    tokenHash: createHash('sha256').update(cookie.token).digest('hex'),
  };
}

const v4Keys = new Map<string, Buffer>();

/** NextAuth v4's key: HKDF-SHA256 of the secret, no salt, its own info, 32 bytes. */
function v4Key(secret: string): Buffer {
  let key = v4Keys.get(secret);
  if (key === undefined) {
    key = Buffer.from(hkdfSync('sha256', secret, '', 'NextAuth.js Generated Encryption Key', 32));
    v4Keys.set(secret, key);
  }
  return key;
}

/** A NextAuth v4 token's claims, or null when it is not one under any of `secrets`. */
function openV4(token: string, secrets: readonly string[]): Record<string, unknown> | null {
  const parts = token.split('.');
  if (parts.length !== 5 || parts[1] !== '' || token.length > 16_384) return null;
  const [protectedHeader = '', , ivText = '', cipherText = '', tagText = ''] = parts;
  let header: unknown;
  try {
    header = JSON.parse(Buffer.from(protectedHeader, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  const { alg, enc } = (header ?? {}) as { alg?: unknown; enc?: unknown };
  if (alg !== 'dir' || enc !== 'A256GCM') return null;
  const iv = Buffer.from(ivText, 'base64url');
  const tag = Buffer.from(tagText, 'base64url');
  if (iv.length !== 12 || tag.length !== 16) return null;
  for (const secret of secrets) {
    try {
      const decipher = createDecipheriv('aes-256-gcm', v4Key(secret), iv);
      decipher.setAAD(Buffer.from(protectedHeader, 'ascii'));
      decipher.setAuthTag(tag);
      const plain = Buffer.concat([
        decipher.update(Buffer.from(cipherText, 'base64url')),
        decipher.final(),
      ]);
      const claims: unknown = JSON.parse(plain.toString('utf8'));
      return typeof claims === 'object' && claims !== null
        ? (claims as Record<string, unknown>)
        : null;
    } catch {
      // Another secret, or not a token of this app.
    }
  }
  return null;
}
