import type { FastifyRequest } from 'fastify';
import type { SessionAccess } from '../auth/session/session-access.js';
import { orUnavailable } from '../auth/request/request-context.js';
import { HttpError } from '../http/errors.js';
import type { UserStore } from '../users/store.js';
import type { SignedIn } from './action.js';
import type { AccountStore } from './model/account-store.js';

export interface GuardDeps {
  sessions: Pick<SessionAccess, 'current'>;
  users: Pick<UserStore, 'findById'>;
  store: Pick<AccountStore, 'provedAt'>;
  reauthMaxAgeSeconds: number;
  now: () => number;
}

/**
 * The (recent) guard over a session's proof: 401 `unauthenticated` when the session is over,
 * 401 `reauthentication_required` when its proof is older than REAUTH_MAX_AGE.
 */
export async function assertRecent(
  deps: { recentUntil(sessionId: string): Promise<number | null>; now: () => number },
  signedIn: SignedIn,
): Promise<void> {
  const until = await deps.recentUntil(signedIn.session.claims.sid);
  if (until === null) throw new HttpError('unauthenticated');
  if (deps.now() >= until) throw new HttpError('reauthentication_required');
}

/**
 * The spec's (session) and (recent) guards. (session): the request's session read as every
 * session read is (revocation, idle expiry, absolute cap; src/auth/session/session-read.ts), else 401
 * `unauthenticated`. (recent): the session also proved the password (sign-in or
 * re-authentication, kept on its row) within REAUTH_MAX_AGE, else 401
 * `reauthentication_required`.
 */
export function createGuards(deps: GuardDeps) {
  /** Until when (ms) the session counts as recent; null when it is over. */
  const recentUntil = async (sessionId: string): Promise<number | null> => {
    const provedAt = await deps.store.provedAt(sessionId);
    return provedAt === null ? null : provedAt + deps.reauthMaxAgeSeconds * 1000;
  };
  return {
    async session(request: FastifyRequest): Promise<SignedIn> {
      const session = await orUnavailable(() => deps.sessions.current(request));
      if (session === null) throw new HttpError('unauthenticated');
      const user = await deps.users.findById(session.claims.sub);
      if (user === null || user.disabled) throw new HttpError('unauthenticated');
      return { session, user };
    },

    recent: (signedIn: SignedIn): Promise<void> =>
      assertRecent({ recentUntil, now: deps.now }, signedIn),

    recentUntil,
  };
}

export type Guards = ReturnType<typeof createGuards>;
