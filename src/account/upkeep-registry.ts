import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { accessTokenMails } from './access-tokens/mails.js';
import { builtinMails } from '../mail/builtin-templates.js';
import { joinMailCatalogues } from '../mail/catalogue.js';
import type { MethodUpkeep } from './model/method-upkeep.js';
import { newDeviceMails } from './new-device/mails.js';
import { waysInUpkeep } from './ways-in.js';

/** Every way in's upkeep, as the registry lists them (src/account/ways-in.ts). */
export const registeredUpkeep: readonly MethodUpkeep[] = waysInUpkeep;

/** Every kind of mail the service sends: the account flows', the access tokens', the new-device notice, each way in's. */
export const registeredMails = joinMailCatalogues(
  builtinMails,
  accessTokenMails,
  newDeviceMails,
  ...registeredUpkeep.map((method) => method.mails ?? {}),
);

/** Each way in's prune of what it keeps past its time. */
export async function pruneRegisteredMethods(db: Kysely<Database>, now: number): Promise<void> {
  await Promise.all(registeredUpkeep.map((method) => method.prune?.(db, now)));
}
