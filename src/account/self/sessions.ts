import { HttpError } from '../../http/errors.js';
import {
  endOtherSessions,
  endSessionByPublicId,
  listUserSessions,
  type SessionView,
} from '../../sessions/user-sessions.js';
import { endHeldCredentials } from '../../users/held-credentials.js';
import { record } from '../model/events.js';
import { answer, type AccountAction, type AccountDeps, type SignedIn } from '../action.js';

// Idle expiry is read from the token, which the row does not hold: a row unseen for longer
// than SESSION_MAX_AGE (with room for "last seen" being written only every few minutes) has
// no token that still reads.
const lastSeenSlackMs = 15 * 60 * 1000;

/** Rows created before this are past the absolute cap; seen before `idle`, past idle expiry. */
function liveSince(deps: AccountDeps) {
  const now = deps.now();
  const { maxAgeSeconds, absoluteMaxAgeSeconds } = deps.sessionLifetime;
  return {
    createdAfter: now - absoluteMaxAgeSeconds * 1000,
    seenAfter: now - maxAgeSeconds * 1000 - lastSeenSlackMs,
  };
}

/** The signed-in user's live sessions, "this one" marked (the JSON route's and the page's). */
export const ownSessions = (deps: AccountDeps, signedIn: SignedIn): Promise<SessionView[]> =>
  listUserSessions(deps.db, {
    userId: signedIn.user.id,
    currentSessionId: signedIn.session.claims.sid,
    ...liveSince(deps),
  });

/** `GET /api/account/sessions`: the user's live sessions, "this one" marked. */
export const listOwnSessions: AccountAction = async (deps, { signedIn }) =>
  answer({ sessions: await ownSessions(deps, signedIn) });

/**
 * `POST /api/account/sessions/{id}/revoke`: ends one of the user's own sessions by its public
 * id (this one too, if named), with its `session_revoked` event in the same transaction. 204;
 * 404 for an id that is no live session of this user's, another user's included.
 */
export const revokeOwnSession: AccountAction = async (deps, { signedIn, params, client }) => {
  const publicId = params.id ?? '';
  const ended = await deps.db.transaction().execute(async (trx) => {
    const done = await endSessionByPublicId(trx, {
      userId: signedIn.user.id,
      publicId,
      at: deps.now(),
    });
    if (done)
      await record(trx, {
        ...client,
        userId: signedIn.user.id,
        type: 'session_revoked',
        detail: { sessions: 1, session: publicId },
      });
    return done;
  });
  if (!ended) throw new HttpError('not_found', {}, 'No such session.');
  return { body: null, status: 204 };
};

/** `POST /api/account/sessions/revoke-others`: every session but this one ends; `{revoked}`. */
export const revokeOtherSessions: AccountAction = async (deps, { signedIn, client }) => {
  const revoked = await deps.db.transaction().execute(async (trx) => {
    await endHeldCredentials(trx, signedIn.user.id, deps.now());
    const count = await endOtherSessions(trx, {
      userId: signedIn.user.id,
      keepSessionId: signedIn.session.claims.sid,
      at: deps.now(),
    });
    if (count > 0)
      await record(trx, {
        ...client,
        userId: signedIn.user.id,
        type: 'session_revoked',
        detail: { sessions: count, others: true },
      });
    return count;
  });
  return answer({ revoked });
};
