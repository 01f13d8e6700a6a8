import { randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { Observer } from '../observe/observer.js';

/** What a sign-in verified: the user, and the credential version its password was checked at. */
export interface VerifiedCredential {
  userId: string;
  credentialVersion: number;
  /**
   * How the sign-in was proved, in order (`password`, then what each check after it proved):
   * kept on the session, so a route can ask for more than a session proved.
   */
  proofs?: readonly string[];
}

/** The client a session was signed in from, as a person's sessions list shows it. */
export interface SessionClient {
  ip: string;
  /** The User-Agent ('' when none). */
  userAgent: string;
}

/** Longest address and User-Agent kept on a session row (bounded against padding). */
const ipMaxLength = 64;
export const userAgentMaxLength = 256;

/** A new session's public id: random, unrelated to its id, so no credential (migration 013). */
export const newPublicId = (): string => randomBytes(16).toString('base64url');

/** A session row's client columns, cut to their bounds. */
export const clientColumns = (client: SessionClient | undefined) => ({
  ip: (client?.ip ?? '').slice(0, ipMaxLength),
  user_agent: (client?.userAgent ?? '').slice(0, userAgentMaxLength),
});

/** What bounds a new session: the per-user limit, and the engine's locking. */
export interface InsertRules {
  perUserMax: number;
  /** PostgreSQL reads the user row FOR SHARE (below). */
  postgres: boolean;
  observer: Pick<Observer, 'sessionsRevoked'>;
}

/** A new session's row and the per-user bound, on `db` or the webhook's transaction. */
export async function insertSession(
  db: Kysely<Database>,
  { perUserMax, postgres, observer }: InsertRules,
  { userId, credentialVersion, proofs = ['password'] }: VerifiedCredential,
  createdAt: number,
  client: SessionClient | undefined,
): Promise<{ id: string; publicId: string } | null> {
  const id = randomUUID();
  const publicId = newPublicId();
  const { ip, user_agent: userAgent } = clientColumns(client);
  // The check and the insert are one statement: a credential change commits either before
  // it (no row matches, no session) or after it (and its revocation ends this session). On
  // PostgreSQL the user row is read FOR SHARE: under READ COMMITTED the insert would
  // otherwise read the row as it was before a change still in flight and commit after that
  // change's revocation ran; the lock waits for the change and then sees its result. On
  // SQLite the statement holds the write lock from its start.
  const inserted = await db
    .insertInto('sessions')
    .columns([
      'id',
      'user_id',
      'created_at',
      'proofs',
      'public_id',
      'ip',
      'user_agent',
      'last_seen_at',
    ])
    .expression((eb) =>
      eb
        .selectFrom('users')
        .select((users) => [
          users.val(id).as('id'),
          'users.id as user_id',
          users.cast<number>(users.val(createdAt), 'bigint').as('created_at'),
          users.val(proofs.join(' ')).as('proofs'),
          users.val(publicId).as('public_id'),
          users.val(ip).as('ip'),
          users.val(userAgent).as('user_agent'),
          users.cast<number>(users.val(createdAt), 'bigint').as('last_seen_at'),
        ])
        .where('users.id', '=', userId)
        .where('users.credential_version', '=', credentialVersion)
        .where('users.disabled', '=', 0)
        .$if(postgres, (query) => query.forShare()),
    )
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) return null;
  // A bounded number of live sessions per user: a client signing in in a loop would
  // otherwise grow the table without end. The oldest sign-ins beyond it are ended.
  const evicted = await db
    .updateTable('sessions')
    .set({ revoked_at: createdAt })
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .where('id', 'not in', (qb) =>
      qb
        .selectFrom('sessions')
        .select('id')
        .where('user_id', '=', userId)
        .where('revoked_at', 'is', null)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(perUserMax),
    )
    .executeTakeFirst();
  observer.sessionsRevoked('limit', Number(evicted.numUpdatedRows));
  return { id, publicId };
}
