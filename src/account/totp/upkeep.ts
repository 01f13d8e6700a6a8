import type { MethodUpkeep } from '../model/method-upkeep.js';
import { pruneChallenges } from './challenges.js';
import { totpMails } from './mails.js';
import { removeTotp } from './totp-store.js';

/**
 * Two-step sign-in's mails; a reset turns it off and voids its recovery codes (`totp_disabled`);
 * the prune drops sign-in challenges past their time (the second step's, enrolment's, passkeys').
 */
export const totpUpkeep: MethodUpkeep = {
  id: 'totp',
  mails: totpMails,
  reset: {
    onlyWhenNamed: false,
    remove: async (trx, userId, now) =>
      (await removeTotp(trx, userId, now)) ? [{ type: 'totp_disabled', detail: {} }] : [],
  },
  prune: pruneChallenges,
};
