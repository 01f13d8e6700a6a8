import { describe, expect, it } from 'vitest';
import { createPasskeyStore } from '../../src/account/passkeys/passkey-store.js';
import { postWithCsrf as post, errorCode } from '../helpers/account-requests.js';
import { capturedMail } from '../helpers/captured-mail.js';
import { Client } from '../helpers/client.js';
import { firstPass } from '../helpers/passes.js';
import { serverOnBackend } from '../helpers/backend-server.js';
import { hasPostgres } from '../helpers/postgres.js';
import { addUser } from '../helpers/server.js';
import { storedSoftPasskey } from '../helpers/soft-passkey.js';
import { base, codeAt, stepMs } from '../helpers/totp-codes.js';

/*
 * Issue 35, item 3: a mailed reset goes through when the account's only second factor is
 * younger than the reset request, and the owner is told. Whoever added a factor after the owner
 * asked for the link had the password, not the mailbox; the owner, holding the mailbox, must not
 * be locked out by it. Such a reset needs no second factor, removes it (TOTP with its recovery
 * codes, or the passkey), records the removal and mails a notice; a factor as old as the request
 * is asked for as ever. Over real HTTP on SQLite and PostgreSQL, with the service's clock moved
 * by whole TOTP steps between the request and the factor.
 */

const password = 'correct horse battery staple';
const newPassword = 'an entirely new passphrase';

describe.each([
  ['SQLite', false],
  ['PostgreSQL', true],
] as const)('a reset asked for before the second factor, on %s', (_, postgres) => {
  const skip = !firstPass || (postgres && !hasPostgres);
  const mail = capturedMail();
  let clock = base;
  let accounts = 0;
  const started = serverOnBackend(
    { postgres, skip },
    {
      now: () => clock,
      wrap: (deps) => ({ ...deps, mail: mail.queue }),
    },
  );

  async function newAccount() {
    accounts += 1;
    clock = base;
    const email = `ada${accounts}@example.com`;
    const userId = await addUser(started.server, email, password, 'Ada');
    return { email, userId };
  }

  /** "Forgot your password?" over HTTP, and the link's token from the mail it queues. */
  async function askForReset(email: string): Promise<string> {
    const before = mail.to(email, 'password-reset').length;
    const asked = await post(new Client(started.server.url), '/api/account/password/forgot', {
      email,
    });
    expect(asked.status).toBe(202);
    // Queued after the answer (the paced queue): wait for it.
    await expect
      .poll(() => mail.to(email, 'password-reset').length, { timeout: 20_000, interval: 10 })
      .toBeGreaterThan(before);
    const link = mail.to(email, 'password-reset').at(-1)?.values.link ?? '';
    return new URL(link).searchParams.get('token') ?? '';
  }

  /** Signs in with the password and turns TOTP on with a code of `step`; returns its key. */
  async function turnOnTotp(email: string, step: number): Promise<string> {
    const client = new Client(started.server.url);
    expect((await client.signIn(email, password)).status).toBe(200);
    const setup = await post(client, '/api/account/totp/setup', {});
    const { secret } = (await setup.json()) as { secret: string };
    expect(
      (await post(client, '/api/account/totp/confirm', { code: codeAt(secret, step) })).status,
    ).toBe(200);
    return secret;
  }

  const reset = (token: string, extra: Record<string, string> = {}) =>
    post(new Client(started.server.url), '/api/account/password/reset', {
      token,
      password: newPassword,
      ...extra,
    });

  const eventsOf = async (userId: string) =>
    (
      await started.server.db
        .selectFrom('account_events')
        .select(['type', 'detail'])
        .where('user_id', '=', userId)
        .execute()
    ).map((event) => ({ type: event.type, detail: JSON.parse(event.detail ?? '{}') as object }));

  const factorsOf = async (userId: string) => {
    const totp = await started.server.db
      .selectFrom('user_totp')
      .select('secret')
      .where('user_id', '=', userId)
      .executeTakeFirst();
    const codes = await started.server.db
      .selectFrom('recovery_codes')
      .select('code_hash')
      .where('user_id', '=', userId)
      .execute();
    return {
      totp: totp?.secret != null,
      recoveryCodes: codes.length,
      passkeys: await createPasskeyStore(started.server.db).count(userId),
    };
  };

  const addPasskey = (userId: string, at: number, name: string) =>
    storedSoftPasskey(started.server.db, userId, { name, at });

  it.skipIf(skip)(
    'TOTP added after the request: the reset needs no code, removes it and its recovery codes, records it and mails the owner',
    async () => {
      const { email, userId } = await newAccount();
      const token = await askForReset(email);
      clock = base + 2 * stepMs;
      await turnOnTotp(email, 2);
      expect(await factorsOf(userId)).toEqual({ totp: true, recoveryCodes: 10, passkeys: 0 });

      const done = await reset(token);
      expect(done.status).toBe(200);
      expect(await factorsOf(userId)).toEqual({ totp: false, recoveryCodes: 0, passkeys: 0 });
      expect(await eventsOf(userId)).toContainEqual({
        type: 'totp_disabled',
        detail: { reason: 'reset_before_factor' },
      });
      const notice = mail.to(email, 'second-factor-notice').at(-1);
      expect(notice?.values.change).toContain(
        'with a link you asked for before two-step sign-in with an authenticator app (and its recovery codes) was added',
      );
      expect(notice?.values.lockLink).toMatch(/\/account\/lock\?token=/);
      expect(mail.to(email, 'password-changed-notice')).toHaveLength(1);
      // The owner signs in with the new password alone.
      const client = new Client(started.server.url);
      expect((await client.signIn(email, newPassword)).status).toBe(200);
      expect(client.sessionCookie()).toBeDefined();
    },
  );

  it.skipIf(skip)(
    'a passkey added after the request, by the code form too: removed with the reset, recorded, the owner told',
    async () => {
      const { email, userId } = await newAccount();
      await askForReset(email);
      const code = mail.to(email, 'password-reset').at(-1)?.values.code ?? '';
      await addPasskey(userId, base + 60_000, 'Intruder key');
      clock = base + 120_000;
      const done = await post(new Client(started.server.url), '/api/account/password/reset', {
        email,
        code,
        password: newPassword,
      });
      expect(done.status).toBe(200);
      expect(await factorsOf(userId)).toEqual({ totp: false, recoveryCodes: 0, passkeys: 0 });
      expect((await eventsOf(userId)).map((event) => event.type)).toContain('passkey_removed');
      expect(mail.to(email, 'second-factor-notice').at(-1)?.values.change).toContain(
        'the passkey "Intruder key"',
      );
    },
  );

  it.skipIf(skip)(
    'TOTP as old as the request or older is asked for as ever, and stays',
    async () => {
      const { email, userId } = await newAccount();
      const secret = await turnOnTotp(email, 0);
      clock = base + 2 * stepMs;
      const token = await askForReset(email);
      const asked = await reset(token);
      expect(await errorCode(asked)).toBe('401 second_factor_required');
      expect(await factorsOf(userId)).toMatchObject({ totp: true, recoveryCodes: 10 });
      expect((await reset(token, { otp: codeAt(secret, 2) })).status).toBe(200);
      expect(await factorsOf(userId)).toMatchObject({ totp: true, recoveryCodes: 10 });
      expect(
        mail
          .to(email, 'second-factor-notice')
          .map((m) => m.values.change)
          .join(' '),
      ).not.toContain('asked for before');
    },
  );

  it.skipIf(skip)(
    'an older factor beside a younger one: the older is asked for, and the younger stays',
    async () => {
      const { email, userId } = await newAccount();
      const secret = await turnOnTotp(email, 0);
      clock = base + 2 * stepMs;
      const token = await askForReset(email);
      await addPasskey(userId, base + 3 * stepMs, 'Later key');
      clock = base + 4 * stepMs;
      expect(await errorCode(await reset(token))).toBe('401 second_factor_required');
      expect((await reset(token, { otp: codeAt(secret, 4) })).status).toBe(200);
      expect(await factorsOf(userId)).toEqual({ totp: true, recoveryCodes: 10, passkeys: 1 });
    },
  );
});
