import type { Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { pruneAuditLog } from '../../src/audit/prune.js';
import { verifyAuditLog } from '../../src/audit/verify-chain.js';
import type { Database } from '../../src/db/schema.js';
import {
  appendAuditEntries,
  cutOldestAuditEntries,
  rewriteAuditChain,
} from '../helpers/audit-chain.js';
import { databaseBackends, databasePerTest } from '../helpers/backends.js';

const backends = databaseBackends('audit-prune');
const dayMs = 86_400_000;
const retentionDays = 365;
const verify = (db: Kysely<Database>) => verifyAuditLog(db, { retentionDays, now: Date.now() });

describe.each(backends)('the audit log’s retention prune on $name', (backend) => {
  const { skip } = backend;
  // A database per test: each starts its chain at seq 1.
  const database = databasePerTest(backend);

  it.skipIf(skip)(
    'removes entries past the retention in batches behind a checkpoint, and the rest still verifies',
    async () => {
      const db = database();
      // Five entries stamped 400 days ago (written now, then moved back as a whole chain), then two of today.
      await appendAuditEntries(db, 5);
      await rewriteAuditChain(db, -400 * dayMs);
      await appendAuditEntries(db, 2);

      // Batches of 2: three take the five old entries, and stop at the first new one.
      expect(await pruneAuditLog(db, Date.now() - retentionDays * dayMs, 2)).toBe(5);
      const verdict = await verify(db);
      expect(verdict).toMatchObject({ ok: true, entries: 2, head: { seq: 7 } });
      expect(verdict.checkpoint.seq).toBe(5);
      // The checkpoint says when the entry it passed was stamped: 400 days ago.
      const age = Date.now() - Date.parse(verdict.checkpoint.lastPrunedAt as string);
      expect(Math.round(age / dayMs)).toBe(400);

      // Appends go on after a prune. The newest entry removed by hand shows (the head names
      // it), and so does the oldest kept one (the checkpoint names the one before it).
      await appendAuditEntries(db, 1);
      expect((await verify(db)).ok).toBe(true);
      await db.deleteFrom('audit_log').where('seq', '=', 8).execute();
      expect((await verify(db)).firstBad).toEqual({ seq: 8, problem: 'removed' });
      await db.deleteFrom('audit_log').where('seq', '=', 6).execute();
      expect((await verify(db)).firstBad).toEqual({ seq: 6, problem: 'removed' });
    },
  );

  it.skipIf(skip)(
    'a checkpoint that passed entries younger than the retention is flagged, however it got there',
    async () => {
      const db = database();
      await appendAuditEntries(db, 7);
      // A prune told to cut at "now" (as no configuration can): the checkpoint records entry 3.
      expect(await pruneAuditLog(db, Date.now() + 1000, 3)).toBe(7);
      let verdict = await verify(db);
      expect(verdict.firstBad).toEqual({ seq: 7, problem: 'pruned-early' });
      expect(Date.now() - Date.parse(verdict.checkpoint.lastPrunedAt as string)).toBeLessThan(
        60_000,
      );
      // Checked against a shorter retention and a later clock it would hold: the age is what counts.
      expect((await verifyAuditLog(db, { retentionDays, now: Date.now() + 366 * dayMs })).ok).toBe(
        true,
      );

      // By hand, without the record: the checkpoint no longer matches what it keeps.
      await appendAuditEntries(db, 3);
      await cutOldestAuditEntries(db, 9);
      verdict = await verify(db);
      expect(verdict.firstBad).toEqual({ seq: 9, problem: 'checkpoint' });
      expect(verdict.checkpoint).toMatchObject({ seq: 9, lastPrunedAt: null });
    },
  );
});
