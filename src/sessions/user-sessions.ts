import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { shownNetwork } from '../util/ip-prefix.js';
import { deviceLabel } from './device-label.js';
import { revokeUserSessions } from './session-store.js';
import { emitUserWebhook } from '../webhooks/emit.js';

/**
 * A live session as its owner (and the operator, for them) sees it: `id` is the public id,
 * random and no credential; the address is cut to its network (IPv4 /24, IPv6 /48) and the
 * User-Agent to a short label.
 */
export interface SessionView {
  id: string;
  current: boolean;
  createdAt: string;
  lastSeenAt: string;
  device: string;
  ip: string;
  /**
   * How it signed in: `password`, `passkey`, `email` (a mailed link or code), or the identity
   * provider's id (`github`, `oidc`), as its first proof records it (a second step is not the
   * method).
   */
  method: string;
}

/** The method a session's proofs name (`identity:github totp` is `github`). */
export function signInMethod(proofs: string): string {
  const first = proofs.split(' ')[0] ?? '';
  return first.startsWith('identity:') ? first.slice('identity:'.length) : first || 'password';
}

/** Sessions listed at most: the live ones a user may hold (`SESSIONS_PER_USER_MAX`, 100). */
const listMax = 200;

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The user's live sessions, newest sign-in first; `currentSessionId` (the asking session's id,
 * never shown) marks "this one". Sessions past the absolute cap or idle expiry are left out: no
 * token reads them any more, though the prune has not removed their rows yet.
 */
export async function listUserSessions(
  db: Kysely<Database>,
  query: {
    userId: string;
    currentSessionId: string | null;
    /** Sessions signed in before are past the absolute cap. */
    createdAfter: number;
    /** Sessions last seen before are past idle expiry. */
    seenAfter: number;
  },
): Promise<SessionView[]> {
  const rows = await db
    .selectFrom('sessions')
    .select(['id', 'public_id', 'created_at', 'last_seen_at', 'ip', 'user_agent', 'proofs'])
    .where('user_id', '=', query.userId)
    .where('revoked_at', 'is', null)
    .where('public_id', 'is not', null)
    .where('created_at', '>', query.createdAfter)
    .where((eb) => eb(eb.fn.coalesce('last_seen_at', 'created_at'), '>', query.seenAfter))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(listMax)
    .execute();
  return rows.map((row) => {
    const createdAt = Number(row.created_at);
    return {
      id: row.public_id ?? '',
      current: row.id === query.currentSessionId,
      createdAt: iso(createdAt),
      lastSeenAt: iso(row.last_seen_at === null ? createdAt : Number(row.last_seen_at)),
      device: deviceLabel(row.user_agent),
      ip: shownNetwork(row.ip),
      method: signInMethod(row.proofs),
    };
  });
}

// Public ids are base64url (new) or hex (from before): anything else is no session of anyone's.
const publicIdPattern = /^[A-Za-z0-9_-]{16,64}$/;

/**
 * Ends the user's live session with this public id, in `trx`; false when the user has no such
 * live session (another user's id reads the same as an unknown one).
 */
export async function endSessionByPublicId(
  trx: Kysely<Database>,
  ending: { userId: string; publicId: string; at: number },
): Promise<boolean> {
  if (!publicIdPattern.test(ending.publicId)) return false;
  const result = await trx
    .updateTable('sessions')
    .set({ revoked_at: ending.at })
    .where('public_id', '=', ending.publicId)
    .where('user_id', '=', ending.userId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  const ended = Number(result.numUpdatedRows) > 0;
  if (ended)
    await emitUserWebhook(trx, 'session.revoked', ending.userId, ending.at, {
      session: ending.publicId,
    });
  return ended;
}

/** Ends every live session of the user but `keepSessionId`, in `trx`; how many ended. */
export async function endOtherSessions(
  trx: Kysely<Database>,
  ending: { userId: string; keepSessionId: string; at: number },
): Promise<number> {
  const result = await revokeUserSessions(trx, ending.userId, ending.at, ending.keepSessionId);
  return Number(result.numUpdatedRows);
}
