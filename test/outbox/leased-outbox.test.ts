import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/schema.js';
import { createOutboxStore } from '../../src/mail/mail-outbox-store.js';
import { createWebhookStore } from '../../src/webhooks/webhook-outbox-store.js';
import { databaseBackends, openMigrated } from '../helpers/backends.js';

/*
 * The leased outbox both the mail and the webhook outbox run on (src/outbox/leased-store.ts), at
 * the statement level, on each database: a row is never held by two workers, an outcome counts
 * only from the lease's holder, a stopping worker gives back only what it holds, and a retry
 * takes only a failed row. Fast (no server): the delivery suites check the same end to end.
 */

const t0 = 1_800_000_000_000;
const leaseMs = 60_000;

async function addWebhooks(db: Kysely<Database>, count: number): Promise<string[]> {
  const ids = Array.from({ length: count }, () => randomUUID());
  await db
    .insertInto('webhook_outbox')
    .values(
      ids.map((id, i) => ({
        id,
        event_id: `msg_${id}`,
        endpoint: 'http://127.0.0.1:9/hooks',
        type: 'user.created',
        payload: '{}',
        state: 'queued' as const,
        next_attempt_at: t0 - count + i,
        retry_until: t0 + 86_400_000,
        lease_holder: null,
        lease_until: null,
        last_error: null,
        created_at: t0 - 1_000,
        sent_at: null,
      })),
    )
    .execute();
  return ids;
}

async function addMail(db: Kysely<Database>, count: number): Promise<string[]> {
  const ids = Array.from({ length: count }, () => randomUUID());
  await db
    .insertInto('mail_outbox')
    .values(
      ids.map((id, i) => ({
        id,
        kind: 'test',
        recipient: 'someone@example.test',
        subject: 'A test',
        body_text: 'text',
        body_html: '<p>text</p>',
        state: 'queued',
        next_attempt_at: t0 - count + i,
        retry_until: t0 + 86_400_000,
        lease_holder: null,
        lease_until: null,
        last_error: null,
        created_at: t0 - 1_000,
        sent_at: null,
        expires_at: null,
        priority: 1,
      })),
    )
    .execute();
  return ids;
}

describe.each(databaseBackends('outbox'))('the leased outbox on $name', ({ skip, create }) => {
  let db: Kysely<Database>;
  let dialect: 'sqlite' | 'postgres';
  let close: () => Promise<void>;

  beforeAll(async () => {
    if (skip) return;
    ({ db, dialect, close } = await openMigrated({ create }));
  });
  afterAll(async () => {
    await close?.();
  });

  it.skipIf(skip)('never gives one row to two workers claiming at once', async () => {
    const webhooks = createWebhookStore(db, dialect);
    const mail = createOutboxStore(db, dialect);
    const ids = [...(await addWebhooks(db, 24)), ...(await addMail(db, 24))];
    const claims = await Promise.all(
      ['a', 'b', 'c', 'd'].flatMap((holder) => [
        webhooks.claimDue(t0, holder, leaseMs, 8),
        mail.claimDue(t0, holder, leaseMs, 8),
      ]),
    );
    const claimed = claims.flat().map((row) => row.id);
    expect(new Set(claimed).size).toBe(claimed.length);
    expect(claimed.sort()).toEqual([...ids].sort());
    // All held now: nothing more is due until the leases run out.
    expect(await webhooks.claimDue(t0, 'e', leaseMs, 8)).toEqual([]);
  });

  it.skipIf(skip)('counts an outcome only from the holder of the lease', async () => {
    const webhooks = createWebhookStore(db, dialect);
    const [id] = (await addWebhooks(db, 1)) as [string];
    await webhooks.claimDue(t0 + 10 * leaseMs, 'a', leaseMs, 100);
    // a's lease ran out: b took the row over.
    const taken = await webhooks.claimDue(t0 + 12 * leaseMs, 'b', leaseMs, 100);
    expect(taken.find((r) => r.id === id)).toMatchObject({ id, leaseHolder: 'b', attempts: 2 });
    await webhooks.markSent(id, 'a', t0);
    await webhooks.markFailed(id, 'a', 'late');
    await webhooks.markRetry(id, 'a', t0, 'late');
    const row = (await webhooks.list({ state: 'sending', limit: 1000 })).find((r) => r.id === id);
    expect(row).toMatchObject({ state: 'sending', leaseHolder: 'b', lastError: null });
    await webhooks.markRetry(id, 'b', t0 + 20 * leaseMs, 'answered 503');
    const retried = (await webhooks.list({ state: 'queued', limit: 1000 })).find(
      (r) => r.id === id,
    );
    expect(retried).toMatchObject({ leaseHolder: null, lastError: 'answered 503' });

    // A mail the server took counts as sent even from a worker whose lease ran out (the mail's
    // own rule: so it is not sent again), its bodies erased; a retry only from the holder.
    const mail = createOutboxStore(db, dialect);
    const [mailId] = (await addMail(db, 1)) as [string];
    await mail.claimDue(t0 + 10 * leaseMs, 'a', leaseMs, 100);
    await mail.claimDue(t0 + 12 * leaseMs, 'b', leaseMs, 100);
    await mail.markRetry(mailId, 'a', t0, 'late');
    expect(await mail.get(mailId)).toMatchObject({ state: 'sending', leaseHolder: 'b' });
    await mail.markSent(mailId, t0 + 12 * leaseMs + 5);
    expect(await mail.get(mailId)).toMatchObject({
      state: 'sent',
      leaseHolder: null,
      sentAt: t0 + 12 * leaseMs + 5,
      bodyText: null,
      bodyHtml: null,
    });
  });

  it.skipIf(skip)('gives back on stop only what the stopping worker holds', async () => {
    const mail = createOutboxStore(db, dialect);
    const at = t0 + 100 * leaseMs;
    await addMail(db, 4);
    const mine = await mail.claimDue(at, 'stopping', leaseMs, 3);
    const [theirs] = await mail.claimDue(at, 'other', leaseMs, 1);
    const [cut, ...unstarted] = mine.map((m) => m.id) as [string, ...string[]];
    await mail.release('stopping', at + 5, [cut]);
    for (const id of unstarted)
      expect(await mail.get(id)).toMatchObject({
        state: 'queued',
        nextAttemptAt: at + 5,
        leaseHolder: null,
        leaseUntil: null,
      });
    expect(await mail.get(cut)).toMatchObject({ state: 'sending', leaseHolder: 'stopping' });
    expect(await mail.get(theirs!.id)).toMatchObject({ state: 'sending', leaseHolder: 'other' });

    const webhooks = createWebhookStore(db, dialect);
    const [held] = await webhooks.claimDue(at + 200 * leaseMs, 'stopping', leaseMs, 1);
    await webhooks.release('stopping', at + 6);
    const back = (await webhooks.list({ state: 'queued', limit: 1000 })).find(
      (r) => r.id === held!.id,
    );
    expect(back).toMatchObject({ nextAttemptAt: at + 6, leaseHolder: null, leaseUntil: null });
  });

  it.skipIf(skip)('retries a failed row, and says why not for any other', async () => {
    const webhooks = createWebhookStore(db, dialect);
    const at = t0 + 1_000 * leaseMs;
    const [failed, sent] = (await addWebhooks(db, 2)) as [string, string];
    await db
      .updateTable('webhook_outbox')
      .set({ state: 'failed' })
      .where('id', '=', failed)
      .execute();
    await db.updateTable('webhook_outbox').set({ state: 'sent' }).where('id', '=', sent).execute();
    expect(await webhooks.retry(failed, at, 3_600_000)).toBe('queued');
    expect(await webhooks.retry(sent, at, 3_600_000)).toBe('not-failed');
    expect(await webhooks.retry(randomUUID(), at, 3_600_000)).toBe('missing');
    const queued = (await webhooks.list({ state: 'queued', limit: 1000 })).find(
      (r) => r.id === failed,
    );
    expect(queued).toMatchObject({ nextAttemptAt: at, retryUntil: at + 3_600_000 });

    const mail = createOutboxStore(db, dialect);
    const [kept, erased] = (await addMail(db, 2)) as [string, string];
    await db.updateTable('mail_outbox').set({ state: 'failed' }).where('id', '=', kept).execute();
    await db
      .updateTable('mail_outbox')
      .set({ state: 'failed', body_text: null, body_html: null })
      .where('id', '=', erased)
      .execute();
    expect(await mail.retry(kept, at, 3_600_000)).toBe('queued');
    expect(await mail.retry(erased, at, 3_600_000)).toBe('erased');
    expect(await mail.retry(kept, at, 3_600_000)).toBe('not-failed');
  });
});
