import { RecentCache } from '../util/recent-cache.js';

/*
 * The session read's caches, every one of them: what it keeps, its bound, and what drops an
 * entry. Each cache is built from its row here (`readCache`, or the row's `entries` for a cache
 * of another kind), so a cache on the read's path cannot exist without its row, and a bound is
 * changed here or nowhere (test/sessions/read-caches.test.ts holds each file to its rows). None
 * of them holds what a revocation could change: expiry and revocation are checked on every read
 * (the SQLite check's kept rows are forgotten at any commit to the file).
 * docs/performance.md says what each one buys.
 */

/** One cache on the session read's path. */
export interface ReadCacheRow {
  /** The file that builds it. */
  file: string;
  /** What it keeps, keyed by what. */
  keeps: string;
  /** Entries at most. */
  entries: number;
  /** What its entries may weigh together (bytes, estimated), when it is weighed. */
  bytes?: number;
  /** Bytes an entry costs beyond its strings (a Map entry and string headers, roughly). */
  entryOverheadBytes?: number;
  /** What drops an entry, besides the bound. */
  dropped: string;
}

export const readCaches = {
  hostOrigins: {
    file: 'src/auth/session/front-read.ts',
    keeps: "a Host header's origin (`new URL('http://' + host).origin`, or none), by the header",
    entries: 256,
    bytes: 64 * 1024,
    entryOverheadBytes: 64,
    dropped: 'the oldest past the bound; a pure function of the header, never stale',
  },
  connectionMemos: {
    file: 'src/auth/session/front-read.ts',
    keeps:
      "a kept-alive connection's last Cookie header (≤ 4 KiB) and what its read settled: the token held, the last body",
    entries: Infinity,
    dropped:
      'its connection closing (a WeakMap on the socket; so one per open connection), or another Cookie header on it',
  },
  decryptedTokens: {
    file: 'src/auth/session/fast-read.ts',
    keeps: "a session token's claims and the cookie name it was read under, by its canonical form",
    entries: 2048,
    bytes: 4 * 1024 * 1024,
    entryOverheadBytes: 128,
    dropped:
      'the oldest past the bound; a hit whose `exp` has passed reads as no session (claims are still checked against the store)',
  },
  verifiedCsrf: {
    file: 'src/auth/cookies/init-cookies.ts',
    keeps: 'the token of a CSRF cookie whose hash verified, by its `token|hash` pair',
    entries: 2048,
    bytes: 1024 * 1024,
    entryOverheadBytes: 64,
    dropped: 'the oldest past the bound; a pure function of the pair and the secrets',
  },
  settledCallbacks: {
    file: 'src/auth/cookies/init-cookies.ts',
    keeps: 'a callback-url cookie settled against an origin (or none when unusable), by the two',
    entries: 256,
    bytes: 256 * 1024,
    entryOverheadBytes: 64,
    dropped: 'the oldest past the bound; a pure function of the two',
  },
  derivedKeys: {
    file: 'src/auth/session/jwe-codec.ts',
    keeps: 'the JWE key, kid and header derived for an encryption, secret and cookie name',
    entries: 64,
    dropped: 'all of them when full (secrets and cookie names come from configuration)',
  },
  sqliteChecks: {
    file: 'src/sessions/sqlite-checks-while-uncommitted.ts',
    keeps: "a session's revocation check on SQLite (its row, or none), by the session id",
    entries: 50_000,
    dropped:
      'every entry at any commit to the file (by any process), all of them when full, and each after 1 s',
  },
  lastSeen: {
    file: 'src/sessions/last-seen.ts',
    keeps: 'when a live session\'s read was last noted for its "last seen", by the session id',
    entries: 100_000,
    dropped: 'at each flush (once a minute), the entries older than five minutes',
  },
} as const satisfies Record<string, ReadCacheRow>;

export type ReadCacheName = keyof typeof readCaches;

/**
 * A weighed {@link RecentCache} built to its row's bound: `weigh` gives an entry's own bytes
 * (its strings), the row adds the entry's overhead.
 */
export function readCache<K, V>(
  name: ReadCacheName,
  weigh: (key: K, value: V) => number,
): RecentCache<K, V> {
  const row: ReadCacheRow = readCaches[name];
  const overhead = row.entryOverheadBytes ?? 0;
  return new RecentCache<K, V>(row.entries, {
    maxWeight: row.bytes ?? Infinity,
    weigh: (key, value) => weigh(key, value) + overhead,
  });
}
