import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendAuditEntry } from '../../src/audit/append.js';
import { pruneAuditLog } from '../../src/audit/prune.js';
import { verifyAuditLog } from '../../src/audit/verify.js';
import type { Database } from '../../src/db/schema.js';
import { databaseBackends, openMigrated } from '../helpers/backends.js';

const backends = databaseBackends('audit-prune');
const entry = (type: string) => ({
  type,
  userId: null,
  actor: 'test',
  ip: '',
  device: 'test',
  detail: null,
});
const pause = () => new Promise((resolve) => setTimeout(resolve, 20));

describe.each(backends)('the audit log’s retention prune on $name', ({ skip, create }) => {
  let db: Kysely<Database>;
  let close: () => Promise<void>;

  beforeAll(async () => {
    if (skip) return;
    ({ db, close } = await openMigrated({ create }));
  });
  afterAll(async () => {
    if (!skip) await close();
  });

  it.skipIf(skip)(
    'removes the oldest entries in batches behind a checkpoint, and the rest still verifies',
    async () => {
      for (let i = 0; i < 5; i += 1) await appendAuditEntry(db, entry(`old-${i}`));
      await pause();
      const cutoff = Date.now();
      await pause();
      for (let i = 0; i < 2; i += 1) await appendAuditEntry(db, entry(`new-${i}`));

      // Batches of 2: three take the five old entries, and stop at the first new one.
      expect(await pruneAuditLog(db, cutoff, 2)).toBe(5);
      expect(await verifyAuditLog(db)).toMatchObject({ ok: true, entries: 2, head: { seq: 7 } });
      const head = await db.selectFrom('audit_head').selectAll().executeTakeFirstOrThrow();
      expect(Number(head.pruned_seq)).toBe(5);

      // Appends go on after a prune. The newest entry removed by hand shows (the head names
      // it), and so does the oldest kept one (the checkpoint names the one before it).
      await appendAuditEntry(db, entry('after'));
      expect((await verifyAuditLog(db)).ok).toBe(true);
      await db.deleteFrom('audit_log').where('seq', '=', 8).execute();
      expect((await verifyAuditLog(db)).firstBad).toEqual({ seq: 8, problem: 'removed' });
      await db.deleteFrom('audit_log').where('seq', '=', 6).execute();
      expect((await verifyAuditLog(db)).firstBad).toEqual({ seq: 6, problem: 'removed' });
    },
  );
});
