import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { MailQueue } from '../../mail/mail-queue.js';
import type { PagePaths } from '../paths.js';
import { holds, lockFactors, lockedWaysIn } from '../model/factor-lock.js';
import { recordWithNotice, type NoticedAccount } from '../model/security-notice.js';
import { deleteIdentity, insertIdentity, type ProviderIdentity } from './identity-store.js';

/*
 * An identity linked to or unlinked from an account: the change, its event (and so the audit
 * log), its webhook and the owner's notice with the "this wasn't me" link, in one transaction.
 */

export interface IdentityLinkPorts {
  db: Kysely<Database>;
  /** The outbox when mail is on; without it no notice is queued. */
  mail: MailQueue | undefined;
  pages: PagePaths;
  now: () => number;
}

export interface LinkClient {
  ip: string;
  device: string;
  origin: string;
}

type Account = Omit<NoticedAccount, 'movedTo'>;

/** The provider's name as the notice shows it. */
export type ProviderNames = (provider: string) => string;

/** Links the identity in `trx`: its event, and the notice unless `quiet` (a new account's own). */
export async function linkIn(
  trx: Kysely<Database>,
  ports: IdentityLinkPorts & { names: ProviderNames },
  account: Account,
  identity: ProviderIdentity,
  client: LinkClient,
  quiet = false,
): Promise<'linked' | 'taken'> {
  const at = ports.now();
  const id = await insertIdentity(trx, account.id, identity, at);
  if (id === 'taken') return 'taken';
  await recordWithNotice(
    trx,
    quiet ? undefined : ports.mail,
    account,
    { ...client, pages: ports.pages },
    {
      type: 'identity_linked',
      detail: { identity: id, provider: identity.provider },
      kind: 'identity-linked-notice',
      values: { providerName: ports.names(identity.provider) },
      now: at,
    },
  );
  return 'linked';
}

/**
 * Unlinks one of the account's identities: 'missing' when it is not theirs, 'last' when it is
 * the account's last way in (no password, no passkey, no other identity), checked under the
 * account's lock in the same transaction, so two removals racing cannot leave none.
 */
export async function unlinkIdentity(
  ports: IdentityLinkPorts & { names: ProviderNames },
  account: Account,
  identityId: string,
  client: LinkClient,
): Promise<'unlinked' | 'missing' | 'last'> {
  const at = ports.now();
  return ports.db.transaction().execute(async (trx) => {
    await lockFactors(trx, account.id);
    if (!(await holds(trx, 'user_identities', identityId, account.id))) return 'missing';
    if ((await lockedWaysIn(trx, account.id)) <= 1) return 'last';
    const provider = await deleteIdentity(trx, account.id, identityId, at);
    if (provider === null) return 'missing';
    await recordWithNotice(
      trx,
      ports.mail,
      account,
      { ...client, pages: ports.pages },
      {
        type: 'identity_unlinked',
        detail: { identity: identityId, provider },
        kind: 'identity-unlinked-notice',
        values: { providerName: ports.names(provider) },
        now: at,
      },
    );
    return 'unlinked';
  });
}
