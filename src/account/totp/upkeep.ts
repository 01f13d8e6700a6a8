import type { MethodUpkeep } from '../model/method-upkeep.js';
import { totpMails } from './mails.js';
import { removeTotp } from './totp-store.js';

/**
 * Two-step sign-in's mails; a reset turns it off and voids its recovery codes (`totp_disabled`).
 * The sign-in challenges it opens are the challenge module's, pruned by the wing.
 */
export const totpUpkeep: MethodUpkeep = {
  id: 'totp',
  mails: totpMails,
  reset: {
    onlyWhenNamed: false,
    remove: async (trx, userId, now) =>
      (await removeTotp(trx, userId, now)) ? [{ type: 'totp_disabled', detail: {} }] : [],
  },
};
