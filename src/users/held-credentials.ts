import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { endAccessTokens } from './access-tokens.js';
import { closeLegacySessions } from './imported-users.js';

/**
 * What a user holds besides their sessions, ended with all their (other) sessions: a password,
 * address or disable change, a lock, an operator's revoke, "sign out everywhere else". Their
 * personal access tokens end, and the old app's session cookies not yet exchanged.
 */
export async function endHeldCredentials(
  trx: Kysely<Database>,
  userId: string,
  at: number,
): Promise<void> {
  await closeLegacySessions(trx, userId, at);
  await endAccessTokens(trx, userId, at);
}
