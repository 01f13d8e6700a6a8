import type { FactorRemoved, MethodUpkeep } from '../model/method-upkeep.js';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { passkeyMails } from './mails.js';
import { pruneSpentChallenges, removeAllPasskeys } from './passkey-store.js';

/** An operator's reset that names passkeys: every passkey of the account, each recorded. */
async function removeEveryPasskey(
  trx: Kysely<Database>,
  userId: string,
  now: number,
): Promise<FactorRemoved[]> {
  const removed = await removeAllPasskeys(trx, userId, now);
  return removed.map((passkey) => ({ type: 'passkey_removed', detail: { passkey } }));
}

/** The passkey notices; the reset only when named; the prune of answered WebAuthn challenges. */
export const passkeyUpkeep: MethodUpkeep = {
  id: 'passkeys',
  mails: passkeyMails,
  reset: { onlyWhenNamed: true, remove: removeEveryPasskey },
  prune: pruneSpentChallenges,
};
