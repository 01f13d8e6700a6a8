import {
  endSessionByPublicId,
  listUserSessions,
  type SessionView,
} from '../sessions/user-sessions.js';
import { readUser } from '../users/writes.js';
import { recordOperatorEvent, type Actor, type OperatorPorts } from './actor.js';

export type { SessionView };

/**
 * A user's live sessions as they see them themselves (no "this one": `current` is false),
 * or 'missing'. `lifetime`: SESSION_MAX_AGE and SESSION_ABSOLUTE_MAX_AGE, so sessions past
 * them are left out as the user's own list leaves them out.
 */
export async function listSessionsOfUser(
  ports: OperatorPorts,
  request: {
    userId: string;
    lifetime: { maxAgeSeconds: number; absoluteMaxAgeSeconds: number };
  },
): Promise<SessionView[] | 'missing'> {
  const user = await readUser(ports.db, request.userId);
  if (user === null) return 'missing';
  const now = ports.now();
  return listUserSessions(ports.db, {
    userId: user.id,
    currentSessionId: null,
    createdAfter: now - request.lifetime.absoluteMaxAgeSeconds * 1000,
    // Room for "last seen" being written only every few minutes (src/sessions/last-seen.ts).
    seenAfter: now - request.lifetime.maxAgeSeconds * 1000 - 15 * 60 * 1000,
  });
}

/**
 * Ends one session of the user by its public id, with `session_revoked` and the actor in the
 * same transaction; 'missing' when the user has no such live session.
 */
export function revokeSessionOfUser(
  ports: OperatorPorts,
  request: { userId: string; sessionId: string; actor: Actor },
): Promise<'revoked' | 'missing'> {
  return ports.db.transaction().execute(async (trx) => {
    const ended = await endSessionByPublicId(trx, {
      userId: request.userId,
      publicId: request.sessionId,
      at: ports.now(),
    });
    if (!ended) return 'missing';
    await recordOperatorEvent(trx, request.actor, request.userId, 'session_revoked', {
      sessions: 1,
      session: request.sessionId,
    });
    return 'revoked';
  });
}
