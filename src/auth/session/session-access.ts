import { encode as authjsEncode, type JWT } from '@auth/core/jwt';
import type { FastifyRequest } from 'fastify';
import { authCookieNames, type SessionCookiePrefix } from '../cookies/cookie-names.js';
import { heldSessionToken, parseCookies, serializeCookie } from '../cookies/cookies.js';
import type { JweCodec } from './jwe-codec.js';
import { isSecure } from '../request/request-site.js';
import type { GatehouseClaims, SessionRead } from './session-read.js';

/** The live session a request holds, as the account routes need it. */
export interface CurrentSession {
  claims: GatehouseClaims;
  /** Its cookie is the https one (`__Secure-`/`__Host-` prefixed). */
  secure: boolean;
}

export interface SessionAccessDeps {
  sessionCookiePrefix: SessionCookiePrefix;
  publicOrigin: string | undefined;
  secrets: readonly string[];
  maxAgeSeconds: number;
  now: () => number;
  /** Reads a token as Auth.js does (same codec and salt); unreadable is null. */
  decode: (token: string, secure: boolean) => Promise<JWT | null>;
  live: SessionRead['live'];
  /** Gatehouse's codec (fast paths on), else Auth.js's own. */
  codec: JweCodec | undefined;
}

/**
 * The session behind a request outside Auth.js's routes (the account routes): the same cookie,
 * codec and liveness check (revocation, idle expiry, the absolute cap) as every session read,
 * and the cookie for a session re-issued under a new id (a password change rotates it).
 * Store failures throw StoreUnavailableError.
 */
export function createSessionAccess(deps: SessionAccessDeps) {
  return {
    async current(request: FastifyRequest): Promise<CurrentSession | null> {
      const secure = isSecure(request, deps.publicOrigin);
      const name = authCookieNames(secure, deps.sessionCookiePrefix).session;
      const cookies = parseCookies(request.headers.cookie);
      const held = await heldSessionToken(
        cookies,
        name,
        async (whole) => (await deps.decode(whole, secure)) !== null,
      );
      if (held.token === undefined) return null;
      const token = await deps.decode(held.token, secure);
      if (token === null) return null;
      const claims = await deps.live(token);
      return claims === null ? null : { claims, secure };
    },

    /** `Set-Cookie` for the same session's claims under another session id. */
    async cookieFor(session: CurrentSession, sid: string): Promise<string> {
      const salt = authCookieNames(session.secure, deps.sessionCookiePrefix).session;
      const params = {
        token: { ...session.claims, sid },
        secret: [...deps.secrets],
        salt,
        maxAge: deps.maxAgeSeconds,
      };
      const value = deps.codec?.encode(params) ?? (await authjsEncode(params));
      const expires = new Date(deps.now() + deps.maxAgeSeconds * 1000);
      return serializeCookie(salt, value, { secure: session.secure, expires });
    },
  };
}

export type SessionAccess = ReturnType<typeof createSessionAccess>;
