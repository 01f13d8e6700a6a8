import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/db/migrate.js';
import { openDatabase } from '../../src/db/open.js';
import { emitWebhook, sendWebhooksTo } from '../../src/webhooks/emit.js';
import { Client } from '../helpers/client.js';
import { firstPass } from '../helpers/passes.js';
import { createTestDatabase, describeIfPostgres } from '../helpers/postgres.js';
import type { ServerProcess } from '../helpers/processes.js';
import { runNode } from '../helpers/spawn.js';
import {
  idsOf,
  newWebhookSecret as newSecret,
  startReceiver,
  startService,
  until,
  type Received,
} from '../helpers/webhooks.js';

const password = 'a long and fine password';

// The worker and its outbox are no fast path: first pass only.
describe.runIf(firstPass)('signed webhooks', () => {
  let dir: string;
  let secret: string;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let service: ServerProcess & { url: string };
  let env: Record<string, string>;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-webhooks-'));
    secret = newSecret();
    receiver = await startReceiver(secret);
    env = {
      DATA_DIR: dir,
      WEBHOOK_URL: receiver.url,
      WEBHOOK_SECRET: secret,
      WEBHOOK_RETRY_SECONDS: '1',
    };
    service = await startService(env);
  });
  afterAll(async () => {
    await service?.stop();
    await receiver?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const cli = (args: string[], stdin?: string) => runNode('gatehouse-cli.cjs', args, env, stdin);

  it('tells the receiver of every change, signed so standardwebhooks verifies it, once per id, with no secret', async () => {
    const email = 'ada@example.com';
    const added = await cli(['users', 'add', '--email', email, '--password-stdin'], password);
    expect(added.code, added.stderr).toBe(0);
    const client = new Client(service.url);
    expect((await client.signIn(email, password)).status).toBe(200);
    const cookie = client.sessionCookie() ?? '';
    expect(cookie).not.toBe('');
    await client.signOut();
    for (const args of [
      ['users', 'rename', '--email', email, '--name', 'Ada L'],
      ['users', 'verify-email', '--email', email],
      ['users', 'disable', '--email', email],
      ['users', 'enable', '--email', email],
      ['users', 'set-email', '--email', email, '--new-email', 'ada2@example.com'],
    ]) {
      const result = await cli(args);
      expect(result.code, result.stderr).toBe(0);
    }
    const setPassword = await cli(
      ['users', 'set-password', '--email', 'ada2@example.com', '--password-stdin'],
      'another long and fine password',
    );
    expect(setPassword.code, setPassword.stderr).toBe(0);
    expect((await cli(['users', 'remove', '--email', 'ada2@example.com'])).code).toBe(0);
    const expected = [
      'user.created',
      'session.created',
      'session.revoked',
      'user.updated',
      'email.verified',
      'user.disabled',
      'user.enabled',
      'email.changed',
      'password.changed',
      'user.deleted',
    ];
    await until(
      () => expected.every((type) => receiver.received.some((e) => e.type === type)),
      10_000,
    );
    const types = receiver.received.map((event) => event.type);
    for (const type of expected) expect(types).toContain(type);
    expect(receiver.refused).toEqual([]);
    expect(idsOf(receiver.received).distinct).toBe(receiver.received.length);
    const created = receiver.received.find((event) => event.type === 'user.created');
    expect(created?.data).toMatchObject({ email, emailVerified: false, disabled: false });
    const session = receiver.received.find((event) => event.type === 'session.created');
    expect(session?.data.session).toMatch(/^[A-Za-z0-9_-]{22}$/);
    const everything = receiver.received.map((event) => JSON.stringify(event.data)).join('\n');
    // `data` holds the user and a session's reference, nothing that signs in.
    expect(everything).not.toMatch(/argon2|password|token|csrf|hash/i);
    expect(everything).not.toContain(cookie);
    // The CLI's view of what was delivered, as the admin API's.
    const listed = JSON.parse((await cli(['webhooks', 'list', '--json'])).stdout) as {
      state: string;
    }[];
    expect(listed.length).toBe(receiver.received.length);
    expect(new Set(listed.map((row) => row.state))).toEqual(new Set(['sent']));
  });

  it('fails verification on a receiver with another secret', () => {
    const event = receiver.received[0] as Received;
    expect(() => new Webhook(newSecret()).verify(event.body, event.headers)).toThrow();
    expect(new Webhook(secret).verify(event.body, event.headers)).toMatchObject({
      type: event.type,
    });
  });

  it('keeps every event while the receiver is down, and delivers each once when it is back', async () => {
    const before = receiver.received.length;
    await receiver.down();
    for (const email of ['down-1@example.com', 'down-2@example.com', 'down-3@example.com']) {
      const added = await cli(['users', 'add', '--email', email, '--password-stdin'], password);
      expect(added.code, added.stderr).toBe(0);
    }
    // Until each has been tried and refused at least once (the retries start at 1 s and double):
    // polled, as a loaded machine may take longer to get there.
    const queued = async () =>
      JSON.parse((await cli(['webhooks', 'list', '--state', 'queued', '--json'])).stdout) as {
        attempts: number;
        lastError: string | null;
      }[];
    await expect
      .poll(
        async () =>
          (await queued()).filter((row) => row.attempts >= 1 && row.lastError !== null).length,
        { timeout: 20_000, interval: 250 },
      )
      .toBe(3);
    await receiver.up();
    await until(() => receiver.received.length >= before + 3, 15_000);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const late = receiver.received.slice(before);
    expect(late.map((event) => event.data.email).sort()).toEqual([
      'down-1@example.com',
      'down-2@example.com',
      'down-3@example.com',
    ]);
    expect(idsOf(receiver.received).distinct).toBe(receiver.received.length);
  }, 60_000);
});

describeIfPostgres('signed webhooks from two instances on one PostgreSQL', () => {
  it.runIf(firstPass)('deliver every event once: no id twice', async () => {
    const database = await createTestDatabase();
    const secret = newSecret();
    // A slow receiver keeps each claim's deliveries in flight while the other instance polls.
    const receiver = await startReceiver(secret, 50);
    const { db } = openDatabase(database.url);
    const services: ServerProcess[] = [];
    try {
      await migrateToLatest(db);
      const env = {
        DATABASE_URL: database.url,
        WEBHOOK_URL: receiver.url,
        WEBHOOK_SECRET: secret,
      };
      services.push(await startService(env), await startService(env));
      // Written straight into the outbox, as a change would: 60 events due at once, for the
      // two workers to claim side by side.
      sendWebhooksTo([receiver.url]);
      const at = Date.now();
      for (let i = 0; i < 60; i += 1) {
        await emitWebhook(
          db,
          'user.updated',
          {
            id: `user-${i}`,
            email: `u${i}@example.com`,
            name: 'U',
            emailVerified: true,
            disabled: false,
          },
          at,
        );
      }
      await until(() => receiver.received.length >= 60, 20_000);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(idsOf(receiver.received)).toEqual({ distinct: 60, total: 60 });
      // Not even an attempt was made twice: every row claimed once, by one instance.
      const rows = await db.selectFrom('webhook_outbox').select(['state', 'attempts']).execute();
      expect(rows.every((row) => row.state === 'sent' && Number(row.attempts) === 1)).toBe(true);
      expect(receiver.refused).toEqual([]);
    } finally {
      sendWebhooksTo([]);
      await Promise.all(services.map((service) => service.stop()));
      await receiver.close();
      await db.destroy();
      await database.drop();
    }
  });
});
