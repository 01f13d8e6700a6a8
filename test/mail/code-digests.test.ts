import { createHash } from 'node:crypto';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postWithCsrf as post } from '../helpers/account-requests.js';
import { Client } from '../helpers/client.js';
import { secretsIn } from '../helpers/mail-reading.js';
import { startMailService, type MailService } from '../account/account-service.js';

/*
 * E-mailed short codes are 40 bits: stored as an unkeyed SHA-256, a copy of the database let
 * anyone find every live code in minutes (issue 25.9). Now they are an HMAC under a key derived
 * from AUTH_SECRET. Black-box: the service in process, a real SMTP server on
 * loopback, and the SQLite file read as someone holding a copy of it would.
 */

const password = 'correct horse battery staple';

describe('mailed codes are stored keyed', () => {
  let mailed: MailService;

  beforeAll(async () => {
    mailed = await startMailService({ users: ['ada@example.com'], password });
  });
  afterAll(async () => {
    await mailed?.close();
  });

  it('a copy of the database cannot confirm a guess of the code, and the code still resets the password', async () => {
    const client = new Client(mailed.service.url);
    const since = mailed.smtp.received.length;
    const forgot = await post(client, '/api/account/password/forgot', { email: 'ada@example.com' });
    expect(forgot.status).toBe(202);
    const { code } = secretsIn(
      await mailed.smtp.mailTo('ada@example.com', since),
      '/account/password/reset',
    );

    const file = path.join(mailed.databaseEnv.DATA_DIR!, 'gatehouse.db');
    const copy = new DatabaseSync(file, { readOnly: true });
    const rows = copy
      .prepare("select id, code_hash from account_tokens where purpose = 'reset'")
      .all() as { id: string; code_hash: string }[];
    copy.close();
    expect(rows).toHaveLength(1);
    const { id, code_hash: stored } = rows[0]!;
    // What the holder of a copy computes for each of the 2^40 guesses: the right one included.
    const unkeyed = createHash('sha256').update(`${id}:${code}`).digest('hex');
    expect(stored).toMatch(/^[0-9a-f]{64}$/);
    expect(stored).not.toBe(unkeyed);

    const reset = await post(client, '/api/account/password/reset', {
      email: 'ada@example.com',
      code,
      password: 'a brand new passphrase 42',
    });
    expect(reset.status).toBe(200);
    expect(
      (await new Client(mailed.service.url).signIn('ada@example.com', 'a brand new passphrase 42'))
        .status,
    ).toBe(200);
  });
});
