import { createFactorThrottleStore } from '../account/model/factor-throttle-store.js';
import type { Throttle } from '../auth/signin/throttle.js';
import { pageListingRows, readListingRow, type UserListingRow } from '../users/listing.js';
import { userData } from '../webhooks/emit.js';
import type { OperatorPorts } from './actor.js';

/** A user as the operator sees one (`users list --json`, the admin API): no hash, no secret. */
export interface UserSummary {
  id: string;
  email: string;
  name: string;
  emailVerified: boolean;
  disabled: boolean;
  /**
   * Failed sign-ins put a lock on the address, or wrong codes on the account's second factor,
   * that is still in force (`users unlock` lifts both).
   */
  locked: boolean;
  /** When the later of those locks ends, ISO; null when none holds. */
  lockedUntil: string | null;
  /** The second factors the user has set up: `totp` (confirmed) and `passkey` (one or more). */
  secondFactors: string[];
  createdAt: string;
}

export type SummaryPorts = OperatorPorts & { throttle: Pick<Throttle, 'emailLockedUntil'> };

/** `totp` when TOTP is on, `passkey` when at least one passkey is registered. */
async function secondFactorsOf(ports: OperatorPorts, userId: string): Promise<string[]> {
  const [totp, passkey] = await Promise.all([
    ports.db
      .selectFrom('user_totp')
      .select('user_id')
      .where('user_id', '=', userId)
      .where('secret', 'is not', null)
      .executeTakeFirst(),
    ports.db
      .selectFrom('passkeys')
      .select('user_id')
      .where('user_id', '=', userId)
      .limit(1)
      .executeTakeFirst(),
  ]);
  return [...(totp === undefined ? [] : ['totp']), ...(passkey === undefined ? [] : ['passkey'])];
}

async function summarise(ports: SummaryPorts, row: UserListingRow): Promise<UserSummary> {
  const now = ports.now();
  const [emailLock, factorLock, secondFactors] = await Promise.all([
    ports.throttle.emailLockedUntil(row.email, now),
    createFactorThrottleStore(ports.db).lockedUntilOfEmail(row.email, now),
    secondFactorsOf(ports, row.id),
  ]);
  const until =
    emailLock === null || factorLock === null
      ? (emailLock ?? factorLock)
      : Math.max(emailLock, factorLock);
  return {
    ...userData(row),
    locked: until !== null,
    lockedUntil: until === null ? null : new Date(until).toISOString(),
    secondFactors,
    createdAt: new Date(Number(row.created_at)).toISOString(),
  };
}

/** One user's summary, or 'missing'. */
export async function showUser(
  ports: SummaryPorts,
  request: { userId: string },
): Promise<UserSummary | 'missing'> {
  const row = await readListingRow(ports.db, request.userId);
  return row === null ? 'missing' : summarise(ports, row);
}

/** A cursor is the last address of the page before: opaque to callers, and no secret. */
export const encodeCursor = (email: string) => Buffer.from(email, 'utf8').toString('base64url');
export function decodeCursor(cursor: string): string | null {
  if (!/^[A-Za-z0-9_-]{1,700}$/.test(cursor)) return null;
  const email = Buffer.from(cursor, 'base64url').toString('utf8');
  return email.includes('@') ? email : null;
}

/**
 * A page of users by address (the order `users list` prints), from after `cursor`; `query`
 * keeps those whose address or name holds it, case aside. `nextCursor` is null on the last page.
 * 'bad-cursor' when the cursor is no cursor this gave out.
 */
export async function findUsers(
  ports: SummaryPorts,
  request: { query?: string; cursor?: string; limit: number },
): Promise<{ users: UserSummary[]; nextCursor: string | null } | 'bad-cursor'> {
  const after = request.cursor === undefined ? undefined : decodeCursor(request.cursor);
  if (after === null) return 'bad-cursor';
  const rows = await pageListingRows(ports.db, {
    limit: request.limit + 1,
    ...(after !== undefined && { after }),
    ...(request.query !== undefined && { query: request.query.trim() }),
  });
  const page = rows.slice(0, request.limit);
  const users = await Promise.all(page.map((row) => summarise(ports, row)));
  const last = page.at(-1);
  return {
    users,
    nextCursor: rows.length > request.limit && last !== undefined ? encodeCursor(last.email) : null,
  };
}
