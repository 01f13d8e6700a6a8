import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { parseCookies } from '../../auth/cookies/cookies.js';

/*
 * The address a browser asked a sign-in mail for, kept for the pages that ask for its code (the
 * "check your inbox" page, the sign-in page after a wrong code), so the person types only the
 * code. Never in a URL (access logs, history): an HttpOnly cookie under /api/auth, SameSite=Lax,
 * `__Secure-` over https, as long as the mail's code lives, cleared by the sign-in it leads to.
 *
 * Set on every answer to a request for the mail, Auth.js clients' too (next-auth's `signIn`
 * then sends the browser to that page), so it must not tell one address from another: the
 * address is sealed (AES-256-GCM under a key derived from AUTH_SECRET, a fresh nonce each time)
 * after padding to a fixed length, so every answer carries a value of the same length that
 * looks random, whatever was typed. An address too long for the padding (non-ASCII, past 256
 * bytes: its length comes from what was typed, not from any account) is not kept; the page then
 * asks for it.
 */

const cookieName = 'gatehouse.email-signin';
const cookiePath = '/api/auth';
const paddedBytes = 256;
const nonceBytes = 12;
const tagBytes = 16;
const sealedLength = Math.ceil(((nonceBytes + paddedBytes + tagBytes) * 4) / 3);

const nameFor = (secure: boolean) => (secure ? `__Secure-${cookieName}` : cookieName);
const line = (secure: boolean, value: string, maxAgeSeconds: number) =>
  `${nameFor(secure)}=${value}; Path=${cookiePath}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;

/** Keep and read the asked address, sealed under keys of AUTH_SECRET's values (first seals). */
export function createAskedAddress(authSecrets: readonly string[]) {
  const keys = authSecrets.map((secret) =>
    Buffer.from(hkdfSync('sha256', secret, '', 'gatehouse email sign-in address v1', 32)),
  );

  function seal(email: string): string | undefined {
    const plain = Buffer.alloc(paddedBytes);
    if (plain.write(email, 'utf8') !== Buffer.byteLength(email) || keys[0] === undefined)
      return undefined;
    const nonce = randomBytes(nonceBytes);
    const cipher = createCipheriv('aes-256-gcm', keys[0], nonce);
    const sealed = Buffer.concat([
      nonce,
      cipher.update(plain),
      cipher.final(),
      cipher.getAuthTag(),
    ]);
    return sealed.toString('base64url');
  }

  function open(value: string): string | undefined {
    const sealed = Buffer.from(value, 'base64url');
    if (sealed.length !== nonceBytes + paddedBytes + tagBytes) return undefined;
    for (const key of keys) {
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, nonceBytes));
        decipher.setAuthTag(sealed.subarray(-tagBytes));
        const plain = Buffer.concat([
          decipher.update(sealed.subarray(nonceBytes, -tagBytes)),
          decipher.final(),
        ]);
        const end = plain.indexOf(0);
        return plain.subarray(0, end === -1 ? plain.length : end).toString('utf8');
      } catch {
        // Not sealed under this key (another secret of the rotation, or not ours): the next.
      }
    }
    return undefined;
  }

  return {
    /** The Set-Cookie line keeping `email` (normalised) for `maxAgeSeconds`, or none. */
    keep(email: string, maxAgeSeconds: number, secure: boolean): string | undefined {
      const sealed = seal(email);
      return sealed === undefined ? undefined : line(secure, sealed, maxAgeSeconds);
    },
    /** The Set-Cookie line that forgets it. */
    forget: (secure: boolean) => line(secure, '', 0),
    /** The address this browser asked a sign-in mail for, if it still holds it. */
    read(cookieHeader: string | undefined, secure: boolean): string | undefined {
      const held = parseCookies(cookieHeader).get(nameFor(secure));
      return held === undefined || held.length !== sealedLength ? undefined : open(held);
    },
  };
}

export type AskedAddress = ReturnType<typeof createAskedAddress>;
