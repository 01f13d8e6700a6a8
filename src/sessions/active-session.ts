/** What a valid session row says about its user right now. */
export interface ActiveSession {
  userId: string;
  email: string;
  name: string;
  createdAt: number;
}

/** One engine's session check (revocation-check.ts, postgres-find-active.ts). */
export type FindActive = (sessionId: string) => Promise<ActiveSession | null>;

/** The same check answered without a promise, where the engine's driver is synchronous (SQLite). */
export type FindActiveNow = (sessionId: string) => ActiveSession | null;

/**
 * The revocation check every session read makes, one statement for both engines: a join on the
 * session's primary key, live only while the session is not revoked and its user not disabled.
 * SQLite asks for one id (`?`); PostgreSQL asks for a batch (`$1`, a text array) and names each
 * row's session, so the answers can be handed back to the reads that asked
 * (postgres-find-active.ts).
 */
export function activeSessionSql(engine: 'sqlite' | 'postgres'): string {
  const batch = engine === 'postgres';
  const sessionId = batch ? `sessions.id as "sessionId", ` : '';
  const match = batch ? 'sessions.id = any($1::text[])' : 'sessions.id = ?';
  return `select ${sessionId}users.id as "userId", users.email, users.name,
  sessions.created_at as "createdAt"
  from sessions join users on users.id = sessions.user_id
  where ${match} and sessions.revoked_at is null and users.disabled = 0`;
}

/** A row of the check as a session, or null for none; PostgreSQL returns `created_at` as text. */
export function toActive(row: ActiveSession | undefined): ActiveSession | null {
  if (row === undefined) return null;
  return { userId: row.userId, email: row.email, name: row.name, createdAt: Number(row.createdAt) };
}
