/** What a valid session row says about its user right now. */
export interface ActiveSession {
  userId: string;
  email: string;
  name: string;
  createdAt: number;
}

/** One engine's session check (session-store.ts, postgres-find-active.ts). */
export type FindActive = (sessionId: string) => Promise<ActiveSession | null>;

/** The same check answered without a promise, where the engine's driver is synchronous (SQLite). */
export type FindActiveNow = (sessionId: string) => ActiveSession | null;

/** A row of the check as a session, or null for none; PostgreSQL returns `created_at` as text. */
export function toActive(row: ActiveSession | undefined): ActiveSession | null {
  if (row === undefined) return null;
  return { userId: row.userId, email: row.email, name: row.name, createdAt: Number(row.createdAt) };
}
