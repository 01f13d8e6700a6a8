import { createPrivateKey, hkdfSync } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { gcmOpen, gcmSeal } from '../util/aes-gcm.js';
import {
  materialOf,
  newSigningKey,
  type SigningKeyMaterial,
} from '../util/signing-key-material.js';

/*
 * The signing keys kept in the database, shared by every instance on it. The private key is
 * sealed under a key derived from AUTH_SECRET (every instance has it; a database copied alone
 * signs nothing), its `kid` bound in as additional data so a sealed key cannot be swapped for
 * another row's.
 */

/**
 * How long before it signs a new key is published: the key set is cached for 5 minutes by
 * those who fetch it, and each instance reads the keys again at least every minute.
 */
export const publishLeadMs = 6 * 60_000;
/** Room for clocks, after a key's last token expired, before the key leaves the set. */
const retireSlackMs = 60_000;

const sealSalt = 'gatehouse token signing key';

function sealingKey(secret: string, kid: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, sealSalt, kid, 32));
}

function seal(material: SigningKeyMaterial, secret: string): string {
  const der = material.privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64');
  const { iv, body } = gcmSeal(sealingKey(secret, material.kid), Buffer.from(material.kid), der);
  return `${iv.toString('base64url')}.${body.toString('base64url')}`;
}

/** The row's private key, opened with the first secret that opens it; null when none does. */
function open(kid: string, sealed: string, secrets: readonly string[]): SigningKeyMaterial | null {
  const [iv, body] = sealed.split('.');
  if (iv === undefined || body === undefined) return null;
  for (const secret of secrets) {
    const der = gcmOpen(
      sealingKey(secret, kid),
      Buffer.from(kid),
      Buffer.from(iv, 'base64url'),
      Buffer.from(body, 'base64url'),
    );
    if (der === null) continue;
    const material = materialOf(
      createPrivateKey({ key: Buffer.from(der, 'base64'), format: 'der', type: 'pkcs8' }),
    );
    return typeof material === 'string' || material.kid !== kid ? null : material;
  }
  return null;
}

/** A key as a row says it: its public part always, its private part when a secret opens it. */
export interface StoredKey {
  kid: string;
  publicJwk: SigningKeyMaterial['publicJwk'];
  /** Null: no AUTH_SECRET here opens it (it still verifies what it signed). */
  material: SigningKeyMaterial | null;
  createdAt: number;
  signsFrom: number;
  publishedUntil: number | null;
}

/** The keys still published at `now`, oldest first. */
export async function loadKeys(
  db: Kysely<Database>,
  secrets: readonly string[],
  now: number,
): Promise<StoredKey[]> {
  const rows = await db
    .selectFrom('token_signing_keys')
    .selectAll()
    .where((eb) => eb.or([eb('published_until', 'is', null), eb('published_until', '>', now)]))
    .orderBy('signs_from')
    .orderBy('kid')
    .execute();
  return rows.map((row) => ({
    kid: row.kid,
    publicJwk: JSON.parse(row.public_jwk) as SigningKeyMaterial['publicJwk'],
    material: open(row.kid, row.private_sealed, secrets),
    createdAt: Number(row.created_at),
    signsFrom: Number(row.signs_from),
    publishedUntil: row.published_until === null ? null : Number(row.published_until),
  }));
}

function rowOf(material: SigningKeyMaterial, secret: string, at: number, signsFrom: number) {
  return {
    kid: material.kid,
    alg: material.alg,
    public_jwk: JSON.stringify(material.publicJwk),
    private_sealed: seal(material, secret),
    created_at: at,
    signs_from: signsFrom,
    published_until: null,
  };
}

/**
 * A first key, signing at once, unless another instance made one that `secrets` opens: one
 * statement (`insert … select … where not exists`), under a table lock on PostgreSQL, so
 * instances starting together agree on one key.
 */
export async function ensureKey(
  db: Kysely<Database>,
  secrets: readonly string[],
  now: number,
  postgres: boolean,
): Promise<void> {
  const secret = secrets[0];
  if (secret === undefined) throw new Error('no AUTH_SECRET to seal a token signing key with');
  await db.transaction().execute(async (trx) => {
    if (postgres) await sql`lock table token_signing_keys in share row exclusive mode`.execute(trx);
    const usable = (await loadKeys(trx, secrets, now)).some(
      (key) => key.material !== null && key.signsFrom <= now,
    );
    if (usable) return;
    // None this secret opens (AUTH_SECRET replaced, not rotated): a new one takes over; the
    // others stay published until their tokens have expired.
    const material = newSigningKey();
    await trx
      .insertInto('token_signing_keys')
      .values(rowOf(material, secret, now, now))
      .execute();
  });
}

export interface Rotation {
  kid: string;
  signsFrom: number;
  /** When the keys it replaces leave the key set. */
  retiredAt: number;
}

/**
 * `gatehouse tokens rotate-key`: a new key, published now and signing `publishLeadMs` later
 * (`now`: at once); every older key stays published until its last token expired (`now`:
 * withdrawn at once, for a key that leaked). Keys past that are deleted.
 */
export async function rotateKey(
  db: Kysely<Database>,
  settings: { secrets: readonly string[]; ttlSeconds: number; immediately: boolean },
  now: number,
): Promise<Rotation> {
  const secret = settings.secrets[0];
  if (secret === undefined) throw new Error('no AUTH_SECRET to seal a token signing key with');
  const material = newSigningKey();
  const signsFrom = settings.immediately ? now : now + publishLeadMs;
  const retiredAt = settings.immediately
    ? now
    : signsFrom + settings.ttlSeconds * 1000 + retireSlackMs;
  await db.transaction().execute(async (trx) => {
    await trx
      .deleteFrom('token_signing_keys')
      .where('published_until', 'is not', null)
      .where('published_until', '<=', now)
      .execute();
    await trx
      .updateTable('token_signing_keys')
      .set({ published_until: retiredAt })
      .where((eb) =>
        eb.or([eb('published_until', 'is', null), eb('published_until', '>', retiredAt)]),
      )
      .execute();
    await trx
      .insertInto('token_signing_keys')
      .values(rowOf(material, secret, now, signsFrom))
      .execute();
  });
  return { kid: material.kid, signsFrom, retiredAt };
}
