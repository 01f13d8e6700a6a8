import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { MailQueue } from '../../mail/mail-queue.js';
import type { PagePaths } from '../paths.js';
import type { ChangedAccount, EventClient } from '../model/credential-change.js';
import { record } from '../model/events.js';
import { lockFactors, voidChallenges } from '../model/factor-lock.js';
import { queueSecurityNotice } from '../model/security-notice.js';
import { createPasskeyStore } from '../passkeys/passkey-store.js';
import { removeTotp } from '../totp/totp-store.js';

/*
 * A reset asked for before the account's second factors were added (issue 35). Whoever added a
 * factor after the owner asked for a reset link had the password (a factor is added after
 * signing in) but not the mailbox, or they would not need it; the owner, who has the mailbox,
 * would otherwise be locked out by it (with SECOND_FACTOR=required, an intruder enrols their own
 * app at sign-in, and the owner's reset then asks for that app). So when every second factor of
 * the account is younger than the reset request, the reset applies without one and removes
 * them, records each removal and tells the owner. A factor as old as the request or older is
 * the owner's as far as anyone can tell: it must be proven, as every reset asks.
 */

/** The second factors a reset would remove: TOTP (with its recovery codes), passkeys. */
export interface YoungFactors {
  totp: boolean;
  passkeys: { id: string; name: string }[];
}

/**
 * The account's second factors when every one was added after `requestedAt` (ms), none at all
 * included; null when one was added at or before it. A TOTP without a recorded time is old.
 */
export async function factorsYoungerThan(
  db: Kysely<Database>,
  userId: string,
  requestedAt: number,
): Promise<YoungFactors | null> {
  const [totp, passkeys] = await Promise.all([
    db
      .selectFrom('user_totp')
      .select('enabled_at')
      .where('user_id', '=', userId)
      .where('secret', 'is not', null)
      .executeTakeFirst(),
    db
      .selectFrom('passkeys')
      .select(['id', 'name', 'created_at'])
      .where('user_id', '=', userId)
      .execute(),
  ]);
  const addedAt = [
    ...(totp === undefined ? [] : [Number(totp.enabled_at ?? 0)]),
    ...passkeys.map((passkey) => Number(passkey.created_at)),
  ];
  if (addedAt.some((at) => at <= requestedAt)) return null;
  return {
    totp: totp !== undefined,
    passkeys: passkeys.map(({ id, name }) => ({ id, name })),
  };
}

/** Whether there is anything to remove. */
export const anyFactor = (factors: YoungFactors) => factors.totp || factors.passkeys.length > 0;

/** What the notice says was removed: "an authenticator app and the passkey "Laptop"". */
function named(removed: YoungFactors): string {
  const parts = [
    ...(removed.totp
      ? ['two-step sign-in with an authenticator app (and its recovery codes)']
      : []),
    ...removed.passkeys.map((passkey) => `the passkey "${passkey.name}"`),
  ];
  return parts.length <= 1
    ? (parts[0] ?? '')
    : `${parts.slice(0, -1).join(', ')} and ${parts.at(-1) ?? ''}`;
}

/**
 * In the reset's transaction, once its secret is used: the account's second factors, all added
 * after `requestedAt`, removed (TOTP with its recovery codes, each passkey), each removal
 * recorded (`totp_disabled`, `passkey_removed`, with `reason: reset_before_factor`), live
 * challenges void, and, when mail is on, a notice saying what went and why. Read again under
 * the account's lock: null when a factor as old as the request is there after all (instances'
 * clocks apart), and nothing is removed: the caller then asks for that factor.
 */
export async function removeYoungFactors(
  trx: Kysely<Database>,
  change: {
    userId: string;
    requestedAt: number;
    account: ChangedAccount;
    client: EventClient;
    mail: MailQueue | undefined;
    links: { origin: string; pages: PagePaths };
    now: number;
  },
): Promise<YoungFactors | null> {
  const { userId, requestedAt, client, now } = change;
  await lockFactors(trx, userId);
  const young = await factorsYoungerThan(trx, userId, requestedAt);
  if (young === null || !anyFactor(young)) return young;
  const detail = { reason: 'reset_before_factor' };
  if (young.totp && (await removeTotp(trx, userId, now)))
    await record(trx, { ...client, userId, type: 'totp_disabled', detail });
  const passkeys = createPasskeyStore(trx);
  for (const passkey of young.passkeys) {
    // With its `second_factor.removed` webhook, as every removal sends one.
    if ((await passkeys.remove(trx, userId, passkey.id, now)) === null) continue;
    await record(trx, {
      ...client,
      userId,
      type: 'passkey_removed',
      detail: { ...detail, passkey: passkey.id },
    });
  }
  await voidChallenges(trx, userId, now);
  if (change.mail !== undefined)
    await queueSecurityNotice(trx, change.mail, {
      kind: 'second-factor-notice',
      account: { id: userId, ...change.account },
      origin: change.links.origin,
      pages: change.links.pages,
      now,
      values: {
        change: `Your password was reset with a link you asked for before ${named(young)} was added to your account. Whoever added it knew your password but could not read your mail, so the reset removed it. If you added it yourself, set it up again on your account page.`,
      },
    });
  return young;
}
