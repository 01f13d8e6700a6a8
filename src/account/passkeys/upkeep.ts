import type { MethodUpkeep } from '../model/method-upkeep.js';
import { passkeyMails } from './mails.js';
import { pruneSpentChallenges, removeAllPasskeys } from './passkey-store.js';

/**
 * The passkey notices; a reset that names passkeys removes every passkey of the account (each
 * `passkey_removed`); the prune forgets answered WebAuthn challenges past their expiry.
 */
export const passkeyUpkeep: MethodUpkeep = {
  id: 'passkeys',
  mails: passkeyMails,
  reset: {
    onlyWhenNamed: true,
    remove: async (trx, userId, now) =>
      (await removeAllPasskeys(trx, userId, now)).map((passkey) => ({
        type: 'passkey_removed',
        detail: { passkey },
      })),
  },
  prune: pruneSpentChallenges,
};
