// Does Gatehouse's own JWE codec (src/auth/session/jwe-codec.ts) still earn its place on Node 24, or
// would jose (what Auth.js uses) do? Issue 16's rule: keep the codec only if dropping it costs
// more than 10 % of session-read throughput. Measured in one process, in one run:
//
// 1. Decode and encode alone: the codec against jose's jwtDecrypt / EncryptJWT over a cached
//    derived key (Auth.js's jwt.ts derives the key on every call; caching it is jose at its best).
// 2. The session read itself, through the real session-read module (dist/auth/session/session-read.js)
//    over a real SQLite store: each read parses the cookies, decrypts the token, checks the
//    session row and builds the answer. "jose" decrypts with jose and hands the result to the same
//    module, so the two differ only in the decryption. Two cookie sets: 32 sessions read again
//    and again (the module's cache of decrypted tokens answers; the codec is not called) and
//    4,096 sessions in turn (beyond the cache's 2,048: every read decrypts, as in any deployment
//    with more live sessions than that per instance, and on every first read after a sign-in,
//    a refresh or a restart).
//
// Usage: npm run build && node scripts/bench/jwe-codec.ts   (about 30 s; no network)
import { hkdfSync } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { EncryptJWT, base64url, calculateJwkThumbprint, jwtDecrypt } from 'jose';

const dist = fileURLToPath(new URL('../../dist/', import.meta.url));
interface Codec {
  decode(params: { token: string; secret: string[]; salt: string }): Record<string, unknown> | null;
  encode(params: {
    token: Record<string, unknown>;
    secret: string[];
    salt: string;
    maxAge: number;
  }): string;
  sealedWith(token: string, secret: string, salt: string): boolean;
}
interface FastRead {
  session(cookie: string, origin: string, secure: boolean): Promise<{ body: string }> | undefined;
}
const { createJweCodec } = (await import(path.join(dist, 'auth/session/jwe-codec.js'))) as {
  createJweCodec: () => Codec;
};
const { createSessionRead } = (await import(path.join(dist, 'auth/session/session-read.js'))) as {
  createSessionRead: (deps: unknown) => { fast: FastRead };
};
const { openDatabase } = (await import(path.join(dist, 'db/open.js'))) as {
  openDatabase: (url: string) => { db: { destroy(): Promise<void> }; sqlite: unknown };
};
const { migrateToLatest } = (await import(path.join(dist, 'db/migrate.js'))) as {
  migrateToLatest: (db: unknown) => Promise<void>;
};
const { createKyselySessionStore } = (await import(
  path.join(dist, 'sessions/session-store.js')
)) as {
  createKyselySessionStore: (
    db: unknown,
    handles: unknown,
  ) => { create(userId: string, at: number): Promise<string> };
};
const { createKyselyUserStore } = (await import(path.join(dist, 'users/kysely-store.js'))) as {
  createKyselyUserStore: (db: unknown) => {
    create(user: { email: string; name: string; passwordHash: string }): Promise<{ id: string }>;
  };
};

const secret = 'bench-secret-0123456789abcdefghijklmnopqrstuvwxyz';
const salt = 'authjs.session-token';
const origin = 'http://127.0.0.1:3000';
const maxAge = 30 * 24 * 60 * 60;
const codec = createJweCodec();

// jose at its best: the derived key kept, not re-derived per call as Auth.js's jwt.ts does.
const keys = new Map<string, Uint8Array>();
function keyFor(enc: string): Uint8Array {
  let key = keys.get(enc);
  if (key === undefined) {
    const info = `Auth.js Generated Encryption Key (${salt})`;
    key = new Uint8Array(hkdfSync('sha256', secret, salt, info, enc === 'A256GCM' ? 32 : 64));
    keys.set(enc, key);
  }
  return key;
}
const kid = await calculateJwkThumbprint(
  { kty: 'oct', k: base64url.encode(keyFor('A256CBC-HS512')) },
  'sha512',
);
const joseDecode = async (token: string) =>
  (
    await jwtDecrypt(token, ({ enc }) => keyFor(enc), {
      clockTolerance: 15,
      keyManagementAlgorithms: ['dir'],
      contentEncryptionAlgorithms: ['A256CBC-HS512', 'A256GCM'],
    })
  ).payload as Record<string, unknown>;
const joseEncode = (claims: Record<string, unknown>) =>
  new EncryptJWT(claims)
    .setProtectedHeader({ alg: 'dir', enc: 'A256CBC-HS512', kid })
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + maxAge)
    .setJti(crypto.randomUUID())
    .encrypt(keyFor('A256CBC-HS512'));

async function opsPerSecond(count: number, op: (i: number) => unknown): Promise<number> {
  for (let i = 0; i < Math.min(count, 2000); i += 1) await op(i);
  const started = performance.now();
  for (let i = 0; i < count; i += 1) await op(i);
  return count / ((performance.now() - started) / 1000);
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-jwe-bench-'));
const { db, sqlite } = openDatabase(`file:${path.join(dir, 'bench.db')}`);
try {
  await migrateToLatest(db);
  const user = await createKyselyUserStore(db).create({
    email: 'ada@example.com',
    name: 'Ada',
    passwordHash: 'x',
  });
  const sessions = createKyselySessionStore(db, { sqlite, sessionsPerUserMax: 10_000 });
  const tokens: string[] = [];
  const now = Date.now();
  for (let i = 0; i < 4096; i += 1) {
    const sid = await sessions.create(user.id, now);
    const claims = { sub: user.id, email: 'ada@example.com', name: 'Ada', sid, auth_time: 0 };
    claims.auth_time = Math.floor(now / 1000);
    tokens.push(codec.encode({ token: claims, secret: [secret], salt, maxAge }));
  }
  const settings = {
    maxAgeSeconds: maxAge,
    updateAgeSeconds: 86_400,
    absoluteMaxAgeSeconds: 2_592_000,
  };
  const readDeps = {
    sessions,
    secrets: [secret],
    session: settings,
    sessionCookiePrefix: '',
    now: Date.now,
  };
  const withCodec = createSessionRead({ ...readDeps, codec }).fast;
  // The same module, its decryption done by jose just before: a jose-based read's work.
  let joseDecoded: Record<string, unknown> | null = null;
  const handOver: Codec = { ...codec, decode: () => joseDecoded };
  const withJose = createSessionRead({ ...readDeps, codec: handOver }).fast;
  const cookie = (i: number, set: number) => `authjs.session-token=${tokens[i % set] as string}`;
  const readCodec = (set: number) => async (i: number) => {
    const answer = await withCodec.session(cookie(i, set), origin, false);
    if (answer === undefined || !answer.body.includes('ada@')) throw new Error('codec read failed');
  };
  const readJose = (set: number) => async (i: number) => {
    joseDecoded = await joseDecode(tokens[i % set] as string);
    const answer = await withJose.session(cookie(i, set), origin, false);
    if (answer === undefined || !answer.body.includes('ada@')) throw new Error('jose read failed');
  };

  const rows: [string, number, number][] = [];
  const measure = async (
    label: string,
    count: number,
    a: (i: number) => unknown,
    b: (i: number) => unknown,
  ) => {
    // Alternating order, two rounds each: the figure is the better of each side's two.
    const codecRuns = [await opsPerSecond(count, a)];
    const joseRuns = [await opsPerSecond(count, b)];
    joseRuns.push(await opsPerSecond(count, b));
    codecRuns.push(await opsPerSecond(count, a));
    rows.push([label, Math.max(...codecRuns), Math.max(...joseRuns)]);
  };
  const claims = { sub: user.id, email: 'ada@example.com', name: 'Ada', sid: 's', auth_time: 0 };
  await measure(
    'decode alone',
    20_000,
    (i) => codec.decode({ token: tokens[i % 4096] as string, secret: [secret], salt }),
    (i) => joseDecode(tokens[i % 4096] as string),
  );
  await measure(
    'encode alone',
    20_000,
    (i) => codec.encode({ token: { ...claims, i }, secret: [secret], salt, maxAge }),
    (i) => joseEncode({ ...claims, i }),
  );
  // Cached: after each token's first read the module never decrypts, whichever codec it has.
  for (let i = 0; i < 32; i += 1) await readJose(32)(i);
  await measure('session read, 32 sessions (cached)', 40_000, readCodec(32), async (i) => {
    const answer = await withJose.session(cookie(i, 32), origin, false);
    if (answer === undefined || !answer.body.includes('ada@')) throw new Error('jose read failed');
  });
  await measure(
    'session read, 4,096 sessions (each decrypted)',
    20_000,
    readCodec(4096),
    readJose(4096),
  );

  process.stdout.write(
    `JWE codec vs jose on Node ${process.versions.node} (ops/s, best of two; 1 thread)\n`,
  );
  process.stdout.write('| what | codec | jose | jose / codec |\n|---|---:|---:|---:|\n');
  for (const [label, a, b] of rows) {
    process.stdout.write(
      `| ${label} | ${Math.round(a).toLocaleString('en')} | ${Math.round(b).toLocaleString('en')} | ${(b / a).toFixed(2)} |\n`,
    );
  }
} finally {
  await db.destroy();
  fs.rmSync(dir, { recursive: true, force: true });
}
