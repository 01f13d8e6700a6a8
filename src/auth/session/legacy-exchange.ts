import type { AccountEventSink } from '../request/account-events.js';
import { authCookieNames, type SessionCookiePrefix } from '../cookies/cookie-names.js';
import { parseCookies, serializeCookie } from '../cookies/cookies.js';
import { createJweCodec } from './jwe-codec.js';
import { legacyCookiesIn, mayHoldV4, openLegacyToken, type LegacyCookie } from './legacy-token.js';
import { readClaims, type GatehouseClaims } from './token-claims.js';
import type { SessionStore } from '../../sessions/session-store.js';
import type { LegacySessionStore } from '../../users/legacy-sessions.js';

export interface LegacyExchangeDeps {
  /** LEGACY_AUTH_SECRET and LEGACY_SESSIONS_UNTIL (src/config/legacy-sessions.ts). */
  settings: { secrets: readonly string[]; untilMs: number };
  store: LegacySessionStore;
  sessions: Pick<SessionStore, 'findActive'>;
  /** AUTH_SECRET: the new session's token is sealed with the first. */
  secrets: readonly string[];
  sessionCookiePrefix: SessionCookiePrefix;
  /** SESSION_MAX_AGE, seconds. */
  maxAgeSeconds: number;
  now: () => number;
  events?: AccountEventSink | undefined;
  log: { info(fields: object, message: string): void };
}

/** What a read does after an exchange: read with `cookieHeader`, and set `setCookies`. */
export interface Exchanged {
  /** The request's cookies with the old ones taken out, and the new session's in their place. */
  cookieHeader: string;
  /** Clears of the old cookies (those not named as Gatehouse's). */
  clears: string[];
  /** The new session's cookie; none when the exchange was refused. */
  sessionCookie: string | undefined;
}

/**
 * The session read's exchange of an old app's session cookie (adoption spec §3). While
 * LEGACY_SESSIONS_UNTIL has not passed, a cookie that opens under a LEGACY_AUTH_SECRET and names
 * an imported user is exchanged for a Gatehouse session; the same old token always maps to that
 * one session, so once it ends (a sign-out, a password change, a lock, a revoke), the old cookie
 * opens nothing again. The read then answers with the new session and its cookie.
 */
export function createLegacyExchange(deps: LegacyExchangeDeps) {
  const codec = createJweCodec({ now: deps.now });
  const active = () => deps.now() <= deps.settings.untilMs;
  const isGatehouseToken = (token: string, name: string) =>
    readClaims(codec.decode({ token, secret: [...deps.secrets], salt: name })) !== null;

  /** The claims of a live session `sid`, or null when it is over. */
  async function claimsOf(sid: string): Promise<GatehouseClaims | null> {
    const session = await deps.sessions.findActive(sid);
    if (session === null) return null;
    return {
      sub: session.userId,
      email: session.email,
      name: session.name,
      sid,
      auth_time: Math.floor(session.createdAt / 1000),
    };
  }

  return {
    /** Whether the read must go to the exchange (a NextAuth v4 cookie, while exchanges are taken). */
    mayHold: (cookieHeader: string | undefined) => active() && mayHoldV4(cookieHeader),

    /**
     * The read's cookies after an exchange, or undefined when the request holds no old cookie that
     * opens (the read goes on as it came). Rejects with the store's failure.
     */
    async exchange(
      cookieHeader: string | undefined,
      secure: boolean,
      client: { ip: string; userAgent: string },
    ): Promise<Exchanged | undefined> {
      if (!active() || cookieHeader === undefined) return undefined;
      const cookies = parseCookies(cookieHeader);
      // A Gatehouse session the browser holds wins over an old cookie left beside it (a v4
      // cookie its browser kept, say): the old one is not exchanged over it.
      const name = authCookieNames(secure, deps.sessionCookiePrefix).session;
      const own = cookies.get(name);
      if (own !== undefined && isGatehouseToken(own, name)) return undefined;
      const held = legacyCookiesIn(cookies);
      let opened:
        | { cookie: LegacyCookie; claims: NonNullable<ReturnType<typeof openLegacyToken>> }
        | undefined;
      for (const cookie of held) {
        const claims = openLegacyToken(cookie, deps.settings.secrets, codec, deps.now());
        if (claims !== null) {
          opened = { cookie, claims };
          break;
        }
      }
      if (opened === undefined) return undefined;
      const { claims } = opened;
      const at = deps.now();
      let sid = await deps.store.exchangedAs(claims.tokenHash);
      const first = sid === null;
      if (sid === null) {
        sid = await deps.store.exchange(claims, at, { ip: client.ip, userAgent: client.userAgent });
      }
      const current = sid === null ? null : await claimsOf(sid);
      const oldNames = new Set(held.flatMap((cookie) => cookie.cookieNames));
      const kept = keptCookies(cookieHeader, oldNames, name);
      const clears = [...oldNames]
        .filter((cookie) => cookie !== name)
        .map((cookie) => clearing(cookie, secure));
      if (current === null) {
        deps.log.info(
          {
            reason: first ? 'legacy_user_refused' : 'legacy_session_ended',
            userId: claims.userId,
            clientIp: client.ip,
          },
          'old session cookie refused',
        );
        const cleared = serializeCookie(name, '', {
          expires: new Date(0),
          maxAgeSeconds: 0,
          secure,
        });
        return {
          cookieHeader: kept.join('; '),
          clears: oldNames.has(name) ? [...clears, cleared] : clears,
          sessionCookie: undefined,
        };
      }
      if (first) {
        deps.log.info({ userId: current.sub, clientIp: client.ip }, 'old session carried over');
        deps.events?.note(
          { type: 'session_migrated', userId: current.sub },
          { ip: client.ip, device: client.userAgent },
        );
      }
      const token = codec.encode({
        token: current,
        secret: [...deps.secrets],
        salt: name,
        maxAge: deps.maxAgeSeconds,
      });
      const expires = new Date(at + deps.maxAgeSeconds * 1000);
      return {
        cookieHeader: [...kept, `${name}=${token}`].join('; '),
        clears,
        sessionCookie: serializeCookie(name, token, { expires, secure }),
      };
    },
  };
}

export type LegacyExchange = ReturnType<typeof createLegacyExchange>;

/** The request's other cookies as they came (their encoding untouched), without `old` and `name`. */
function keptCookies(cookieHeader: string, old: ReadonlySet<string>, name: string): string[] {
  return cookieHeader
    .split(';')
    .map((part) => part.trim())
    .filter((part) => {
      const cookie = part.slice(0, Math.max(0, part.indexOf('=')));
      return part !== '' && !old.has(cookie) && cookie !== name;
    });
}

/** A Set-Cookie that clears `cookie`, Secure where its prefix or the site needs it. */
const clearing = (cookie: string, secure: boolean) =>
  serializeCookie(cookie, '', {
    expires: new Date(0),
    maxAgeSeconds: 0,
    secure: secure || cookie.startsWith('__'),
  });
