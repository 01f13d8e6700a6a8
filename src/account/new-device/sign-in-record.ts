import { sql, type Kysely } from 'kysely';
import type { SignInDevice } from '../../auth/request/account-events.js';
import { databaseNow } from '../../db/clock.js';
import type { Database } from '../../db/schema.js';
import type { MailQueue } from '../../mail/mail-queue.js';
import { deviceLabel } from '../../sessions/device-label.js';
import { shownNetwork } from '../../util/ip-prefix.js';
import { record } from '../model/events.js';
import { noticedAccount, queueSecurityNotice } from '../model/security-notice.js';
import type { PagePaths } from '../paths.js';
import { markSeen, placeOf, seenBefore, type SignInPlace } from './places.js';

export interface SignInRecordDeps {
  db: Kysely<Database>;
  /** NEW_DEVICE_NOTICE: a sign-in from a new device and network is recorded, and mailed. */
  notice: boolean;
  /** The outbox when mail is on; without it the event is recorded and nothing is mailed. */
  mail: MailQueue | undefined;
  /** Where the lock page lives (ACCOUNT_PAGES_PATH). */
  pages: PagePaths;
  /**
   * New-device mails per account and window at most (THROTTLE_EMAIL_MAX_FAILURES,
   * THROTTLE_WINDOW_SECONDS); past it the event is still recorded.
   */
  budget: { max: number; windowSeconds: number };
  now: () => number;
  log: { info(fields: object, message: string): void };
}

/** A sign-in that succeeded, with its device, as the sign-in's record is told it. */
export interface SignedIn {
  userId: string;
  detail?: Record<string, unknown>;
  device: SignInDevice;
}

const months =
  'January February March April May June July August September October November December';

/** "3 March 2026, 09:05 UTC": a mail cannot know its reader's time zone, so it says UTC. */
function utcTime(ms: number): string {
  const d = new Date(ms);
  const two = (n: number) => String(n).padStart(2, '0');
  const month = months.split(' ')[d.getUTCMonth()] ?? '';
  return `${d.getUTCDate()} ${month} ${d.getUTCFullYear()}, ${two(d.getUTCHours())}:${two(d.getUTCMinutes())} UTC`;
}

/**
 * Whether the notice goes: not without mail, nor past the account's budget, counted in its
 * new-device events within the window (before this one, in the sign-in's transaction).
 */
async function noticeFate(
  trx: Kysely<Database>,
  deps: SignInRecordDeps,
  userId: string,
): Promise<'mailed' | 'mail_off' | 'over_budget'> {
  if (deps.mail === undefined) return 'mail_off';
  const row = await trx
    .selectFrom('account_events')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('user_id', '=', userId)
    .where('type', '=', 'signin_new_device')
    .where('at', '>', sql<number>`${databaseNow(trx)} - ${deps.budget.windowSeconds * 1000}`)
    .executeTakeFirst();
  return Number(row?.n ?? 0) >= deps.budget.max ? 'over_budget' : 'mailed';
}

/**
 * `signin_new_device`, and the notice with its "this wasn't me" link when mail is on and the
 * account's budget has room, in the sign-in's transaction.
 */
async function noticeNewDevice(
  trx: Kysely<Database>,
  deps: SignInRecordDeps,
  signIn: SignedIn & { place: SignInPlace; client: { ip: string; device: string }; now: number },
): Promise<void> {
  const { userId, place, client, now } = signIn;
  const mail = deps.mail;
  const notice = await noticeFate(trx, deps, userId);
  await record(trx, {
    userId,
    type: 'signin_new_device',
    ip: client.ip,
    device: client.device,
    detail: { network: place.network, notice },
  });
  if (notice === 'over_budget')
    deps.log.info({ userId, reason: 'account_budget' }, 'new-device notice not mailed');
  if (notice !== 'mailed' || mail === undefined) return;
  const account = await noticedAccount(trx, userId);
  if (account === null) return;
  await queueSecurityNotice(trx, mail, {
    kind: 'new-device-notice',
    account,
    origin: signIn.device.origin,
    pages: deps.pages,
    now,
    values: {
      signedInAt: utcTime(now),
      deviceName: deviceLabel(client.device),
      network: shownNetwork(client.ip),
    },
  });
}

/**
 * A sign-in's record, written after its answer (src/account/event-sink.ts), in one transaction:
 * `signin`, its device and network marked as seen, and when both were new to an account that
 * had signed in before, `signin_new_device` and its notice. Only a sign-in that passed every
 * check and got its session comes here (never a refusal: no oracle), so the notice needs the
 * password and every factor, and the device's row, inserted once, makes it once per device.
 */
export function createSignInRecord(deps: SignInRecordDeps) {
  return async (signIn: SignedIn, client: { ip: string; device: string }): Promise<void> => {
    const place = placeOf(signIn.userId, signIn.device.id, client.ip);
    const now = deps.now();
    await deps.db.transaction().execute(async (trx) => {
      const seen = await seenBefore(trx, place, signIn.device.cookieVerified);
      await record(trx, {
        userId: signIn.userId,
        type: 'signin',
        ip: client.ip,
        device: client.device,
        ...(signIn.detail !== undefined && { detail: signIn.detail }),
      });
      const deviceAdded = await markSeen(trx, place, now);
      if (!deps.notice || seen.first || seen.device || seen.network || !deviceAdded) return;
      await noticeNewDevice(trx, deps, { ...signIn, place, client, now });
    });
  };
}

export type SignInRecord = ReturnType<typeof createSignInRecord>;
