import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postWithCsrf } from '../helpers/account-requests.js';
import { Client } from '../helpers/client.js';
import { firstPass } from '../helpers/passes.js';
import { createTestDatabase, hasPostgres, type TestDatabase } from '../helpers/postgres.js';
import { freePort, untilAccepts } from '../helpers/processes.js';
import { softPasskey } from '../helpers/soft-passkey.js';
import { runNode } from '../helpers/spawn.js';
import { refusalCode } from '../helpers/totp-codes.js';
import * as webhooks from '../helpers/webhooks.js';

/*
 * `second_factor.added` and `second_factor.removed` for every way a second factor changes, from
 * the built service, its CLI and its admin API (SECOND_FACTOR=required, so enrolment at sign-in
 * is one of them) to a receiver on loopback that verifies each delivery with `standardwebhooks`:
 * each change is delivered exactly once, with the factor's kind (and a passkey's id as the
 * account's list shows it), never a secret. The service's clock is the real one: a code "one
 * step ahead" is one the window still takes and no earlier proof spent.
 */

const password = 'a long and fine password';
const adminToken = 'ops-token-0123456789abcdef0123456789abcdef';

/** The code of `key` (base32) for the step `steps` steps from now. */
const codeOf = (key: string, steps = 0) =>
  TOTP.generate({ secret: Secret.fromBase32(key), timestamp: Date.now() + steps * 30_000 });

/** What a second-factor event says, in a form that sorts. */
const factorEvent = (event: webhooks.Received) =>
  [event.type, event.data.factor, event.data.passkey ?? '', event.data.replaced ?? ''].join(' ');

describe.each([
  ['SQLite', false],
  ['PostgreSQL', true],
] as const)('second-factor webhooks on %s', (_, postgres) => {
  // The worker and its outbox are no fast path: first pass only.
  const skip = !firstPass || (postgres && !hasPostgres);
  let dir: string;
  let database: TestDatabase | undefined;
  let receiver: Awaited<ReturnType<typeof webhooks.startReceiver>>;
  let service: Awaited<ReturnType<typeof webhooks.startService>>;
  let adminUrl: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    if (skip) return;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-factor-webhooks-'));
    if (postgres) database = await createTestDatabase();
    const secret = webhooks.newWebhookSecret();
    receiver = await webhooks.startReceiver(secret);
    const tokenFile = path.join(dir, 'admin-tokens');
    fs.writeFileSync(tokenFile, `ops:${adminToken}\n`);
    const adminPort = await freePort();
    adminUrl = `http://127.0.0.1:${adminPort}`;
    env = {
      DATA_DIR: dir,
      ...(database !== undefined && { DATABASE_URL: database.url }),
      WEBHOOK_URL: receiver.url,
      WEBHOOK_SECRET: secret,
      WEBHOOK_RETRY_SECONDS: '1',
      SECOND_FACTOR: 'required',
    };
    service = await webhooks.startService({
      ...env,
      ADMIN_PORT: String(adminPort),
      ADMIN_TOKEN_FILE: tokenFile,
    });
    await untilAccepts(adminPort);
  }, 60_000);
  afterAll(async () => {
    if (skip) return;
    await service?.stop();
    await receiver?.close();
    await database?.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const cli = (args: string[], stdin?: string) => runNode('gatehouse-cli.cjs', args, env, stdin);

  const post = (client: Client, route: string, body: Record<string, unknown> = {}) =>
    postWithCsrf(client, route, body);

  /** A user added by the CLI, enrolled at sign-in: the client signed in, the app's key. */
  async function enrolledAtSignIn(email: string) {
    const added = await cli(['users', 'add', '--email', email, '--password-stdin'], password);
    expect(added.code, added.stderr).toBe(0);
    const userId = /id ([0-9a-f-]{36})/.exec(added.stdout)?.[1] ?? '';
    // The password alone enrols nothing: an operator's enrolment code stands in for the code
    // a sign-in mails (held in the outbox here: development without SMTP_URL).
    const issued = await cli(['users', 'enrolment-code', '--email', email]);
    expect(issued.code, issued.stderr).toBe(0);
    const emailCode = /^([2-9A-HJ-NP-Z]{8})$/m.exec(issued.stdout)?.[1] ?? '';
    const client = new Client(service.url);
    expect(await refusalCode(await client.signIn(email, password))).toBe(
      'second_factor_enrolment_required',
    );
    const { secret } = (await (await client.get('/api/auth/enrolment/totp')).json()) as {
      secret: string;
    };
    const enrolled = await client.postForm(
      '/api/auth/callback/credentials',
      { csrfToken: await client.csrfToken(), otp: codeOf(secret), emailCode },
      { 'x-auth-return-redirect': '1' },
    );
    expect(await refusalCode(enrolled)).toBeNull();
    return { userId, client, key: secret };
  }

  /** A software passkey registered as a browser registers one; its id in the account's list. */
  async function addPasskey(client: Client): Promise<string> {
    const options = (await (
      await client.get('/api/auth/webauthn-options/passkey?action=register')
    ).json()) as { options: { challenge: string } };
    const data = softPasskey().register({
      challenge: options.options.challenge,
      origin: service.url,
    });
    const answer = await client.postForm(
      '/api/auth/callback/passkey',
      { csrfToken: await client.csrfToken(), action: 'register', data },
      { 'x-auth-return-redirect': '1' },
    );
    expect(((await answer.json()) as { url: string }).url).not.toContain('error=');
    const { passkeys } = (await (await client.get('/api/account/passkeys')).json()) as {
      passkeys: { id: string }[];
    };
    return passkeys.at(-1)?.id ?? '';
  }

  /** The second-factor events delivered about `userId`, once `count` of them arrived. */
  async function factorEventsOf(userId: string, count: number) {
    const mine = () =>
      receiver.received.filter(
        (event) => event.data.id === userId && event.type.startsWith('second_factor.'),
      );
    await webhooks.until(() => mine().length >= count, 15_000);
    // Long enough for a second delivery of any of them to come too.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    return mine();
  }

  it.skipIf(skip)(
    "the account's own changes: TOTP enrolled at sign-in, moved to a new app, a passkey added and removed, TOTP off and on again, then the CLI's resets",
    async () => {
      const email = 'grace@example.com';
      const { userId, client, key } = await enrolledAtSignIn(email);
      // Moved to a new app: one event, marked as a replacement. A refused move sends none.
      expect((await post(client, '/api/account/totp/setup')).status).toBe(400);
      const setup = await post(client, '/api/account/totp/setup', { code: codeOf(key, 1) });
      expect(setup.status).toBe(200);
      const moved = ((await setup.json()) as { secret: string }).secret;
      expect(
        (await post(client, '/api/account/totp/confirm', { code: codeOf(moved) })).status,
      ).toBe(200);
      // New recovery codes are no new factor.
      expect((await post(client, '/api/account/recovery-codes')).status).toBe(200);
      const first = await addPasskey(client);
      expect((await post(client, `/api/account/passkeys/${first}/remove`)).status).toBe(200);
      const second = await addPasskey(client);
      expect(
        (await post(client, '/api/account/totp/disable', { code: codeOf(moved, 1) })).status,
      ).toBe(200);
      // On again from the account's own routes (its session stayed).
      const again = await post(client, '/api/account/totp/setup');
      const third = ((await again.json()) as { secret: string }).secret;
      expect(
        (await post(client, '/api/account/totp/confirm', { code: codeOf(third) })).status,
      ).toBe(200);
      for (const args of [
        ['users', 'reset-second-factor', '--email', email],
        ['users', 'reset-second-factor', '--email', email, '--passkeys'],
      ]) {
        const reset = await cli(args);
        expect(reset.code, reset.stderr).toBe(0);
      }
      const events = await factorEventsOf(userId, 9);
      expect(events.map(factorEvent).sort()).toEqual(
        [
          'second_factor.added totp  ',
          'second_factor.added totp  true',
          `second_factor.added passkey ${first} `,
          `second_factor.removed passkey ${first} `,
          `second_factor.added passkey ${second} `,
          'second_factor.removed totp  ',
          'second_factor.added totp  ',
          'second_factor.removed totp  ',
          `second_factor.removed passkey ${second} `,
        ].sort(),
      );
      expect(webhooks.idsOf(events)).toEqual({ distinct: 9, total: 9 });
      for (const event of events) {
        expect(Object.keys(event.data).sort()).toEqual(
          [
            'disabled',
            'email',
            'emailVerified',
            'factor',
            'id',
            'name',
            ...(event.data.passkey !== undefined ? ['passkey'] : []),
            ...(event.data.replaced !== undefined ? ['replaced'] : []),
          ].sort(),
        );
        expect(event.data).toMatchObject({ id: userId, email, disabled: false });
      }
      const said = JSON.stringify(events.map((event) => event.data));
      for (const secret of [key, moved, third]) expect(said).not.toContain(secret);
      expect(receiver.refused).toEqual([]);
    },
  );

  it.skipIf(skip)(
    "the admin API's reset with passkeys: TOTP and each passkey removed, each said once",
    async () => {
      const { userId, client } = await enrolledAtSignIn('ada@example.com');
      const passkey = await addPasskey(client);
      const reset = await fetch(`${adminUrl}/api/admin/users/${userId}/reset-second-factor`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ passkeys: true }),
      });
      expect(reset.status).toBe(200);
      const events = await factorEventsOf(userId, 4);
      expect(events.map(factorEvent).sort()).toEqual(
        [
          'second_factor.added totp  ',
          `second_factor.added passkey ${passkey} `,
          'second_factor.removed totp  ',
          `second_factor.removed passkey ${passkey} `,
        ].sort(),
      );
      expect(webhooks.idsOf(events)).toEqual({ distinct: 4, total: 4 });
    },
  );
});
