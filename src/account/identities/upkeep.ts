import type { MethodUpkeep } from '../model/method-upkeep.js';
import { pruneOffers } from './identity-store.js';
import { identityMails } from './mails.js';

/** Identities' notices, and the prune of link offers past their time; no second factor to reset. */
export const identityUpkeep: MethodUpkeep = {
  id: 'identities',
  mails: identityMails,
  prune: pruneOffers,
};
