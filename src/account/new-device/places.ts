import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { deviceCookieMaxAgeSeconds } from '../../auth/cookies/device-cookie.js';
import { deleteInBatches } from '../../db/delete-in-batches.js';
import type { Database, SignInPlacesTable } from '../../db/schema.js';
import { ipPrefix } from '../../util/ip-prefix.js';

/*
 * The devices and networks an account has signed in from (`sign_in_places`, migration 022). A
 * device is its device cookie's id (src/auth/cookies/device-cookie.ts), kept as the SHA-256 of
 * the user's id and that id: the table holds no cookie's id, and one browser's rows under two
 * accounts do not match. A network is the address's prefix (IPv4 /24, IPv6 /48), as the
 * account's own lists show addresses.
 */

/** One sign-in's device and network, as this table keys them. */
export interface SignInPlace {
  userId: string;
  deviceKey: string;
  network: string;
}

export function placeOf(userId: string, deviceId: string, ip: string): SignInPlace {
  const deviceKey = createHash('sha256').update(`${userId}\0${deviceId}`).digest('base64url');
  return { userId, deviceKey, network: ipPrefix(ip) };
}

/** What an account had seen of a sign-in's place before it. */
export interface SeenBefore {
  /** It had never signed in (as far as its places and its 90 days of events go). */
  first: boolean;
  device: boolean;
  network: boolean;
}

/**
 * Of each kind, the most kept per account; past it the longest unseen goes. A client that keeps
 * no cookies is a new device at every sign-in, and must not grow the table without end.
 */
const placesPerKindMax = 100;

/** A place unseen this long is forgotten: as long as a device cookie lives. */
export const placeKeptMs = deviceCookieMaxAgeSeconds * 1000;

/** Sign-ins of the account's record, for an account with no places yet. */
const recordedSignInsRead = 200;

/**
 * What the account had seen of `place`. An account without places (it has not signed in since
 * they were kept: an upgrade) is judged by its record instead: a sign-in or a carried-over
 * session there means it is not its first, the networks of those are known, and its device is
 * known when the device cookie it brought verified for it (`cookieVerified`).
 */
export async function seenBefore(
  trx: Kysely<Database>,
  place: SignInPlace,
  cookieVerified: boolean,
): Promise<SeenBefore> {
  const rows = await trx
    .selectFrom('sign_in_places')
    .select(['kind', 'key'])
    .where('user_id', '=', place.userId)
    .where((eb) =>
      eb.or([
        eb.and([eb('kind', '=', 'device'), eb('key', '=', place.deviceKey)]),
        eb.and([eb('kind', '=', 'network'), eb('key', '=', place.network)]),
      ]),
    )
    .execute();
  const kept = (kind: SignInPlacesTable['kind']) => rows.some((row) => row.kind === kind);
  const any =
    rows.length > 0 ||
    (await trx
      .selectFrom('sign_in_places')
      .select('user_id')
      .where('user_id', '=', place.userId)
      .limit(1)
      .executeTakeFirst()) !== undefined;
  if (any) return { first: false, device: kept('device'), network: kept('network') };
  const recorded = await trx
    .selectFrom('account_events')
    .select('ip')
    .where('user_id', '=', place.userId)
    .where('type', 'in', ['signin', 'session_migrated'])
    .orderBy('at', 'desc')
    .limit(recordedSignInsRead)
    .execute();
  return {
    first: recorded.length === 0,
    device: cookieVerified,
    network: recorded.some((row) => ipPrefix(row.ip) === place.network),
  };
}

/**
 * Records `place`'s device and network as seen at `now`. True when the device's row is new: of
 * two sign-ins racing from one new device, only one inserts it (the primary key decides, on
 * both backends and across instances).
 */
export async function markSeen(
  trx: Kysely<Database>,
  place: SignInPlace,
  now: number,
): Promise<boolean> {
  const deviceAdded = await touch(trx, place.userId, 'device', place.deviceKey, now);
  await touch(trx, place.userId, 'network', place.network, now);
  return deviceAdded;
}

async function touch(
  trx: Kysely<Database>,
  userId: string,
  kind: SignInPlacesTable['kind'],
  key: string,
  now: number,
): Promise<boolean> {
  const inserted = await trx
    .insertInto('sign_in_places')
    .values({ user_id: userId, kind, key, first_seen_at: now, last_seen_at: now })
    .onConflict((conflict) => conflict.columns(['user_id', 'kind', 'key']).doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) {
    await trx
      .updateTable('sign_in_places')
      .set({ last_seen_at: now })
      .where('user_id', '=', userId)
      .where('kind', '=', kind)
      .where('key', '=', key)
      .execute();
    return false;
  }
  await trx
    .deleteFrom('sign_in_places')
    .where('user_id', '=', userId)
    .where('kind', '=', kind)
    .where('key', 'not in', (eb) =>
      eb
        .selectFrom('sign_in_places')
        .select('key')
        .where('user_id', '=', userId)
        .where('kind', '=', kind)
        .orderBy('last_seen_at', 'desc')
        .orderBy('key')
        .limit(placesPerKindMax),
    )
    .execute();
  return true;
}

/**
 * Forgets the places the account first signed in from at `since` or later, in the lock's
 * transaction: whoever used them, let in again after an unlock, is told to the owner again.
 */
export async function forgetPlacesSince(
  trx: Kysely<Database>,
  userId: string,
  since: number,
): Promise<void> {
  await trx
    .deleteFrom('sign_in_places')
    .where('user_id', '=', userId)
    .where('first_seen_at', '>=', since)
    .execute();
}

/** Deletes places last seen before `before` (the wing's periodic prune). */
export async function prunePlaces(db: Kysely<Database>, before: number): Promise<void> {
  await deleteInBatches(db, (limit) =>
    db
      .deleteFrom('sign_in_places')
      .where((eb) =>
        eb(
          eb.refTuple('user_id', 'kind', 'key'),
          'in',
          eb
            .selectFrom('sign_in_places')
            .select(['user_id', 'kind', 'key'])
            .where('last_seen_at', '<', before)
            .limit(limit)
            .$asTuple('user_id', 'kind', 'key'),
        ),
      )
      .executeTakeFirst(),
  );
}
