import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import {
  readSigningKeys,
  type PublicJwk,
  type SigningKeyMaterial,
} from '../util/signing-key-material.js';
import { ensureKey, loadKeys, type StoredKey } from './key-store.js';

/** How often an instance reads the database's keys again, at most: a rotation reaches it then. */
const reloadMs = 60_000;
/** A token naming a key not known here makes a read sooner, at most this often. */
const unknownKidReloadMs = 10_000;

/** The keys tokens are signed and checked with, as every route asks for them. */
export interface KeyRing {
  /** The key that signs now. */
  signer(): Promise<SigningKeyMaterial>;
  /** Every published key: the key set's content. */
  published(): Promise<PublicJwk[]>;
  /** A published key by `kid`, for checking a token's signature; undefined: none. */
  find(kid: string): Promise<PublicJwk | undefined>;
}

interface Loaded {
  signer: SigningKeyMaterial;
  published: PublicJwk[];
  at: number;
}

/** The newest key that signs by `now` and that a secret here opens. */
function signerOf(keys: readonly StoredKey[], now: number): SigningKeyMaterial | undefined {
  return (
    keys
      .filter((key) => key.signsFrom <= now && key.material !== null)
      .sort((a, b) => b.signsFrom - a.signsFrom || (a.kid < b.kid ? 1 : -1))[0]?.material ??
    undefined
  );
}

/** TOKEN_SIGNING_KEY's keys: the first signs, all are published, none is ever read again. */
export function fileKeyRing(pem: string): KeyRing {
  const keys = readSigningKeys(pem);
  if (typeof keys === 'string') throw new Error(`TOKEN_SIGNING_KEY ${keys}`);
  const [signer] = keys;
  if (signer === undefined) throw new Error('TOKEN_SIGNING_KEY holds no key');
  const published = keys.map((key) => key.publicJwk);
  return {
    signer: () => Promise.resolve(signer),
    published: () => Promise.resolve(published),
    find: (kid) => Promise.resolve(published.find((key) => key.kid === kid)),
  };
}

/**
 * The database's keys, read at the first use and again a minute later at most; a first key is
 * made when none signs (a new deployment, or AUTH_SECRET replaced). One read at a time.
 */
export function databaseKeyRing(deps: {
  db: Kysely<Database>;
  secrets: readonly string[];
  postgres: boolean;
  now: () => number;
}): KeyRing {
  let loaded: Loaded | undefined;
  let loading: Promise<Loaded> | undefined;
  const read = async (): Promise<Loaded> => {
    const now = deps.now();
    let keys = await loadKeys(deps.db, deps.secrets, now);
    let signer = signerOf(keys, now);
    if (signer === undefined) {
      await ensureKey(deps.db, deps.secrets, now, deps.postgres);
      keys = await loadKeys(deps.db, deps.secrets, now);
      signer = signerOf(keys, now);
    }
    if (signer === undefined) throw new Error('no token signing key could be made');
    return { signer, published: keys.map((key) => key.publicJwk), at: now };
  };
  const fresh = (maxAgeMs: number): Promise<Loaded> => {
    if (loaded !== undefined && deps.now() - loaded.at < maxAgeMs) return Promise.resolve(loaded);
    loading ??= read()
      .then((done) => (loaded = done))
      .finally(() => (loading = undefined));
    return loading;
  };
  return {
    signer: async () => (await fresh(reloadMs)).signer,
    published: async () => (await fresh(reloadMs)).published,
    async find(kid) {
      const known = (await fresh(reloadMs)).published.find((key) => key.kid === kid);
      if (known !== undefined) return known;
      return (await fresh(unknownKidReloadMs)).published.find((key) => key.kid === kid);
    },
  };
}
