import type { Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pruneAuditLog } from '../../src/audit/prune.js';
import { sealAuditChain } from '../../src/audit/reseal.js';
import { sealAuditWith } from '../../src/audit/seal.js';
import { verifyAuditLog } from '../../src/audit/verify-chain.js';
import type { Database } from '../../src/db/schema.js';
import {
  appendAuditEntries as append,
  cutOldestAuditEntries,
  rewriteAuditChain,
} from '../helpers/audit-chain.js';
import { databaseBackends, databasePerTest } from '../helpers/backends.js';

/*
 * The seal under AUDIT_KEY (src/audit/seal.ts), against someone who can write the database but
 * does not hold the key: every change to the head or the checkpoint that did not go through an
 * append or a prune holding the key shows, and nothing written to the database repairs it; only
 * `gatehouse audit seal` (sealAuditChain) starts it again.
 */

const backends = databaseBackends('audit-seal');
const keyA = 'audit-key-a-0123456789abcdefghijklmnopqrstuvwxyz';
const keyB = 'audit-key-b-0123456789abcdefghijklmnopqrstuvwxyz';
const dayMs = 86_400_000;
const retention = () => ({ retentionDays: 365, now: Date.now() });
const verdictOf = async (db: Kysely<Database>) => {
  const verdict = await verifyAuditLog(db, retention());
  return { ok: verdict.ok, firstBad: verdict.firstBad, seal: verdict.seal };
};

describe.each(backends)('the audit log’s seal on $name', (backend) => {
  const { skip } = backend;
  const database = databasePerTest(backend);
  let db: Kysely<Database>;
  beforeEach(() => {
    if (skip) return;
    db = database();
    sealAuditWith([keyA]);
  });
  afterEach(() => sealAuditWith([]));

  it.skipIf(skip)(
    'starts with `audit seal`, is kept by appends and prunes, and a rewrite without the key shows',
    async () => {
      await append(db, 3);
      // A key and no seal: never sealed, or the seal removed. Appends do not seal it by themselves.
      expect(await verdictOf(db)).toMatchObject({
        ok: false,
        firstBad: { seq: 3, problem: 'unsealed' },
        seal: { state: 'missing', since: null },
      });
      expect(await sealAuditChain(db, retention())).toEqual({ sealed: 3, was: 'missing' });
      await append(db, 4);
      expect(await verdictOf(db)).toMatchObject({ ok: true, seal: { state: 'valid', since: 3 } });

      // An honest prune past the retention keeps it whole.
      await rewriteAuditChain(db, -400 * dayMs);
      expect((await verdictOf(db)).firstBad).toEqual({ seq: 7, problem: 'seal' });
      await sealAuditChain(db, retention());
      await append(db, 1);
      expect(await pruneAuditLog(db, Date.now() - 365 * dayMs)).toBe(7);
      expect(await verdictOf(db)).toMatchObject({ ok: true, seal: { state: 'valid', since: 7 } });

      // The whole chain rewritten with its hashes: it links up, but the head is not the sealed one.
      await rewriteAuditChain(db, -1000);
      expect(await verdictOf(db)).toMatchObject({ firstBad: { seq: 8, problem: 'seal' } });
      // Without the key the chain itself verifies: only the seal, or a head kept elsewhere, shows it.
      sealAuditWith([]);
      expect(await verdictOf(db)).toMatchObject({ ok: true, seal: { state: 'unchecked' } });
      // An append without the key (or with it, over a broken seal) leaves it broken.
      await append(db, 1);
      sealAuditWith([keyA]);
      await append(db, 1);
      expect((await verdictOf(db)).firstBad).toEqual({ seq: 10, problem: 'seal' });
      expect(await sealAuditChain(db, retention())).toEqual({ sealed: 10, was: 'broken' });
      expect((await verdictOf(db)).seal).toEqual({ state: 'valid', since: 10 });
    },
  );

  it.skipIf(skip)(
    'the oldest entries cut with the checkpoint moved and recorded: flagged, the seal broken, and not sealed again',
    async () => {
      await append(db, 5);
      await sealAuditChain(db, retention());
      await cutOldestAuditEntries(db, 3, { record: true });
      // The checkpoint's own check names it first; the seal no longer holds either.
      const verdict = await verdictOf(db);
      expect(verdict.firstBad).toEqual({ seq: 3, problem: 'pruned-early' });
      expect(verdict.seal.state).toBe('broken');
      // A seal removed is no way out either.
      await db.updateTable('audit_head').set({ seal: null, sealed_since: null }).execute();
      expect(await sealAuditChain(db, retention())).toMatchObject({ refused: 'broken' });
    },
  );

  it.skipIf(skip)(
    'a rotation: a seal made with an older listed key holds, and the next append moves it to the new one',
    async () => {
      await append(db, 2);
      await sealAuditChain(db, retention());
      sealAuditWith([keyB, keyA]);
      expect((await verdictOf(db)).seal.state).toBe('valid');
      await append(db, 1);
      sealAuditWith([keyB]);
      expect(await verdictOf(db)).toMatchObject({ ok: true, seal: { state: 'valid', since: 2 } });
      sealAuditWith([keyA]);
      expect((await verdictOf(db)).firstBad).toEqual({ seq: 3, problem: 'seal' });
    },
  );
});
