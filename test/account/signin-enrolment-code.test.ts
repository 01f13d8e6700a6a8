import { describe, expect, it } from 'vitest';
import { issueEnrolmentCode, unlockEmail } from '../../src/operator/operations.js';
import { capturedMail } from '../helpers/captured-mail.js';
import { Client } from '../helpers/client.js';
import { firstPass } from '../helpers/passes.js';
import { serverOnBackend } from '../helpers/backend-server.js';
import { hasPostgres } from '../helpers/postgres.js';
import { addUser } from '../helpers/server.js';
import { base, codeAt, proofsOf, refusalCode, wrongCode } from '../helpers/totp-codes.js';
import { browser, follow, hidden, noticeOf, submitSignInForm } from '../pages/page-helpers.js';

/*
 * Issue 35, item 3: with SECOND_FACTOR=required the password alone no longer enrols its
 * holder's authenticator app. The enrolment challenge comes with a code mailed to the account's
 * address (its owner's mailbox), and the enrolling post must carry it (`emailCode`) beside a
 * code of the new app: bound to that challenge, five tries, spent with the enrolment, every
 * wrong guess charged as a second factor's. Over real HTTP on SQLite and PostgreSQL, the mail
 * read from an in-process outbox; the clock is fixed at `base`.
 */

const password = 'correct horse battery staple';

// A wrong code is a guess at a second factor: three of them reach the limit here; the
// enrolment's mails have the same per-account budget.
const throttle = {
  emailMaxFailures: 3,
  ipMaxFailures: 100,
  emailMaxAttempts: 1_000_000,
  ipMaxAttempts: 1_000_000,
  windowSeconds: 900,
  lockSeconds: 900,
};

describe.each([
  ['SQLite', false],
  ['PostgreSQL', true],
] as const)('enrolment at sign-in proven by a mailed code, on %s', (_, postgres) => {
  const skip = !firstPass || (postgres && !hasPostgres);
  const mail = capturedMail();
  let accounts = 0;
  const started = serverOnBackend(
    { postgres, skip },
    {
      now: () => base,
      throttle,
      config: { secondFactor: { mode: 'required', keys: [] }, throttle },
      wrap: (deps) => ({ ...deps, mail: mail.queue }),
    },
  );

  async function newAccount() {
    accounts += 1;
    const email = `grace${accounts}@example.com`;
    const userId = await addUser(started.server, email, password, 'Grace');
    return { email, userId };
  }

  /** A password sign-in refused for enrolment: the browser, the app's key, the mailed code. */
  async function enrolmentStep(email: string) {
    const client = new Client(started.server.url);
    expect(await refusalCode(await client.signIn(email, password))).toBe(
      'second_factor_enrolment_required',
    );
    const answer = await client.get('/api/auth/enrolment/totp');
    expect(answer.status).toBe(200);
    const body = (await answer.json()) as { secret: string; codeSentTo: string | null };
    expect(body.codeSentTo).toBe(email);
    const challenge = client.cookies.get('gatehouse.second-step') ?? '';
    return { client, key: body.secret, code: mail.enrolmentCode(email), challenge };
  }

  /** An operator's unlock: the password's counters and the account's second-factor count. */
  const unlock = (email: string) =>
    unlockEmail(
      { db: started.server.db, now: () => base, throttle: started.server.services.throttle },
      { email, actor: { label: 'gatehouse CLI' } },
    );

  const post = async (client: Client, fields: Record<string, string>) =>
    client.postForm(
      '/api/auth/callback/credentials',
      { csrfToken: await client.csrfToken(), ...fields },
      { 'x-auth-return-redirect': '1' },
    );

  const totpOn = async (userId: string) =>
    (
      await started.server.db
        .selectFrom('user_totp')
        .select('secret')
        .where('user_id', '=', userId)
        .executeTakeFirst()
    )?.secret != null;

  it.skipIf(skip)(
    'the password alone no longer enrols: a right app code without the mailed code is email_code_required, and nothing is turned on',
    async () => {
      const { email, userId } = await newAccount();
      const client = new Client(started.server.url);
      expect(await refusalCode(await client.signIn(email, password))).toBe(
        'second_factor_enrolment_required',
      );
      const { secret: key } = (await (await client.get('/api/auth/enrolment/totp')).json()) as {
        secret: string;
      };
      const refused = await post(client, { otp: codeAt(key, 0) });
      expect(await refusalCode(refused)).toBe('email_code_required');
      expect(client.sessionCookie()).toBeUndefined();
      expect(await totpOn(userId)).toBe(false);
      expect(await proofsOf(started.server.db, userId)).toEqual([]);
    },
  );

  it.skipIf(skip)(
    'the code goes to the account\'s address with a "this wasn\'t me" link; with a right app code it enrols once',
    async () => {
      const { email, userId } = await newAccount();
      const { client, key, code, challenge } = await enrolmentStep(email);
      const sent = mail.to(email, 'signin-enrolment-code').at(-1);
      expect(sent?.values).toMatchObject({ code, expiresInMinutes: '5', name: 'Grace' });
      expect(sent?.values.lockLink).toMatch(/\/account\/lock\?token=[\w-]+$/);
      expect(code).toMatch(/^[2-9A-HJ-NP-Z]{8}$/);
      // As a person types it: any case, with a dash.
      const typed = `${code.slice(0, 4).toLowerCase()}-${code.slice(4)}`;
      const enrolled = await post(client, { otp: codeAt(key, 0), emailCode: typed });
      expect(await refusalCode(enrolled)).toBeNull();
      expect(client.sessionCookie()).toBeDefined();
      expect(await proofsOf(started.server.db, userId)).toEqual(['password otp']);
      expect(await totpOn(userId)).toBe(true);
      // Spent with the enrolment: the same codes again sign nobody in.
      const again = new Client(started.server.url);
      again.cookies.set('gatehouse.second-step', challenge);
      expect(await refusalCode(await post(again, { otp: codeAt(key, 1), emailCode: code }))).toBe(
        'credentials',
      );
      expect(again.sessionCookie()).toBeUndefined();
    },
  );

  it.skipIf(skip)(
    'a wrong mailed code is email_code_invalid and counted: charged as a code guess, and after five tries the right one is dead',
    async () => {
      const { email, userId } = await newAccount();
      const first = await enrolmentStep(email);
      // Charged where a wrong app code is: two of them and one wrong app code reach the limit.
      for (const wrong of ['AAAAAAAA', 'BBBBBBBB'])
        expect(
          await refusalCode(
            await post(first.client, { otp: codeAt(first.key, 0), emailCode: wrong }),
          ),
        ).toBe('email_code_invalid');
      expect(
        await refusalCode(
          await post(first.client, { otp: wrongCode(first.key, 0), emailCode: first.code }),
        ),
      ).toBe('second_factor_invalid');
      const locked = await post(first.client, { otp: codeAt(first.key, 0), emailCode: first.code });
      expect(locked.status).toBe(429);
      expect(await refusalCode(locked)).toBe('rate_limited');
      expect(await totpOn(userId)).toBe(false);
      // The sign-in page (a form post's redirect) says the codes are paused, on the step.
      const paused = await first.client.get(
        '/api/auth/signin?error=CredentialsSignin&code=rate_limited&retryAfter=900&afterPassword=1',
        { accept: 'text/html' },
      );
      const pausedPage = await paused.text();
      expect(noticeOf(pausedPage)?.text).toContain(
        'Setting up two-step sign-in is paused for now to keep this account safe',
      );
      expect(pausedPage).toContain('name="emailCode"');

      // Five tries a code, whatever the throttle: its sixth guess (the right one) finds it dead.
      await unlock(email);
      const second = await enrolmentStep(email);
      const hits = await started.server.db
        .updateTable('signin_challenges')
        .set({ code_tries_left: 1 })
        .where('user_id', '=', userId)
        .where('used_at', 'is', null)
        .where('purpose', '=', 'enrolment')
        .where('code_hash', 'is not', null)
        .executeTakeFirst();
      expect(Number(hits.numUpdatedRows)).toBeGreaterThan(0);
      expect(
        await refusalCode(
          await post(second.client, { otp: codeAt(second.key, 0), emailCode: 'CCCCCCCC' }),
        ),
      ).toBe('email_code_invalid');
      expect(
        await refusalCode(
          await post(second.client, { otp: codeAt(second.key, 0), emailCode: second.code }),
        ),
      ).toBe('email_code_invalid');
      // Its page and the key's API say to start again: the challenge can no longer enrol.
      expect((await second.client.get('/api/auth/enrolment/totp')).status).toBe(401);
      const page = await (
        await second.client.get(
          '/api/auth/signin?error=CredentialsSignin&code=email_code_invalid',
          {
            accept: 'text/html',
          },
        )
      ).text();
      expect(noticeOf(page)?.text).toContain(
        'Enter your password again: we will mail you a new code.',
      );
      expect(page).toContain('name="password"');
      expect(await totpOn(userId)).toBe(false);
      await unlock(email);
    },
  );

  it.skipIf(skip)(
    'a code mailed for another challenge, or to another account, does not enrol',
    async () => {
      const { email, userId } = await newAccount();
      const other = await newAccount();
      const older = await enrolmentStep(email);
      const newer = await enrolmentStep(email);
      expect(newer.code).not.toBe(older.code);
      const theirs = await enrolmentStep(other.email);
      for (const code of [older.code, theirs.code])
        expect(
          await refusalCode(
            await post(newer.client, { otp: codeAt(newer.key, 0), emailCode: code }),
          ),
        ).toBe('email_code_invalid');
      expect(await totpOn(userId)).toBe(false);
      // Each challenge's own code still works (two tries spent of five).
      const done = await post(newer.client, { otp: codeAt(newer.key, 0), emailCode: newer.code });
      expect(await refusalCode(done)).toBeNull();
      expect(await totpOn(userId)).toBe(true);
      expect(await totpOn(other.userId)).toBe(false);
      await unlock(email);
    },
  );

  it.skipIf(skip)(
    'the sign-in page (no script) says where the code went, names a wrong one in words, and enrols with both',
    async () => {
      const { email, userId } = await newAccount();
      const client = browser(started.server);
      const first = await submitSignInForm(client, { email, password });
      expect(first.headers.get('location')).toContain('code=second_factor_enrolment_required');
      const step = await follow(client, first);
      expect(noticeOf(step)?.text).toContain(`we have mailed a code to ${email}`);
      expect(step).toMatch(/<label for="emailCode">Code from the mail we sent to [^<]+<\/label>/);
      const key = /<code>([A-Z2-7]{32})<\/code>/.exec(step)?.[1] ?? '';
      const send = (fields: Record<string, string>) =>
        client.postForm('/api/auth/callback/credentials', {
          csrfToken: hidden(step, 'csrfToken'),
          callbackUrl: hidden(step, 'callbackUrl'),
          ...fields,
        });
      const missing = await send({ otp: codeAt(key, 0), emailCode: '' });
      expect(missing.headers.get('location')).toContain('code=email_code_required');
      expect(noticeOf(await follow(client, missing))?.text).toContain(
        `Enter the code we mailed to ${email} too`,
      );
      const wrong = await send({ otp: codeAt(key, 0), emailCode: 'ZZZZZZZZ' });
      expect(wrong.headers.get('location')).toContain('code=email_code_invalid');
      const again = await follow(client, wrong);
      expect(noticeOf(again)).toMatchObject({ role: 'alert' });
      expect(noticeOf(again)?.text).toContain(`That is not the code we mailed to ${email}`);
      expect(again).toMatch(/id="emailCode"[^>]*aria-invalid="true"/);
      expect(again).not.toMatch(/id="otp"[^>]*aria-invalid/);
      const right = await send({ otp: codeAt(key, 0), emailCode: mail.enrolmentCode(email) });
      expect(right.status).toBe(200);
      expect(await right.text()).toContain('download="recovery-codes.txt"');
      expect(await totpOn(userId)).toBe(true);
      await unlock(email);
    },
  );

  it.skipIf(skip)(
    "an operator's enrolment code stands in for the mailed one with mail on too, once",
    async () => {
      const { email, userId } = await newAccount();
      const issued = await issueEnrolmentCode(
        { db: started.server.db, now: () => base },
        { userId, actor: { label: 'gatehouse CLI' } },
      );
      if (typeof issued === 'string') throw new Error(issued);
      const { client, key } = await enrolmentStep(email);
      const right = await post(client, { otp: codeAt(key, 0), emailCode: issued.code });
      expect(await refusalCode(right)).toBeNull();
      expect(await totpOn(userId)).toBe(true);
      const used = await started.server.db
        .selectFrom('account_tokens')
        .select('used_at')
        .where('user_id', '=', userId)
        .where('purpose', '=', 'enrolment')
        .executeTakeFirstOrThrow();
      expect(used.used_at).not.toBeNull();
    },
  );

  it.skipIf(skip)(
    "past the account's mail budget a right password gets email_code_limited and no new code",
    async () => {
      const { email } = await newAccount();
      // The budget is the per-address limit of "forgot password" (three here).
      for (let i = 0; i < 3; i += 1) await enrolmentStep(email);
      const sent = mail.to(email, 'signin-enrolment-code').length;
      const client = new Client(started.server.url);
      const refused = await client.signIn(email, password);
      expect(refused.status).toBe(200);
      expect(await refusalCode(refused)).toBe('email_code_limited');
      expect(mail.to(email, 'signin-enrolment-code')).toHaveLength(sent);
      expect(client.cookies.get('gatehouse.second-step') ?? '').toBe('');
      const page = await client.get(
        '/api/auth/signin?error=CredentialsSignin&code=email_code_limited',
        { accept: 'text/html' },
      );
      expect(noticeOf(await page.text())?.text).toContain('so no new one was sent');
    },
  );
});
