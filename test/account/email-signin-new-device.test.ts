import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseBackends } from '../helpers/backends.js';
import { startMailService, type MailService } from './account-service.js';
import {
  clientAt,
  askMail,
  mailedSecrets,
  pressLinkButton,
  sessionEmail,
} from './email-signin-helpers.js';

/*
 * The two halves of issue 40 together: a sign-in by e-mail (its mailed link) from a device and a
 * network the account has not seen mails the owner the new-device notice, as a password's does;
 * the same device signing in by e-mail again mails nothing more.
 */

const password = 'correct horse battery staple';
const notice = /^New sign-in to your /;

describe.each(databaseBackends('email-new-device'))('e-mailed sign-in on $name', (backend) => {
  let mailed: MailService | undefined;

  beforeAll(async () => {
    if (backend.skip) return;
    mailed = await startMailService({
      backend: backend.dialect,
      users: ['nd@example.com'],
      password,
      env: { EMAIL_SIGNIN: 'on', TRUST_PROXY: '127.0.0.1', MAIL_RETRY_SECONDS: '1' },
    });
  }, 60_000);
  afterAll(() => mailed?.close());

  it.skipIf(backend.skip)(
    'a mailed link used on a new device and network sends the new-device notice, once',
    async () => {
      const { service, smtp } = mailed as MailService;
      const email = 'nd@example.com';
      // The account's first sign-in, at home, with its password: nothing to compare with.
      const home = clientAt(service, '203.0.113.9');
      expect((await home.signIn(email, password)).status).toBe(200);
      expect(await sessionEmail(home)).toBe(email);

      // Far away, on another device: the mailed link, opened and pressed there.
      const phone = clientAt(service, '198.51.100.77');
      const since = smtp.received.length;
      await askMail(phone, email);
      const { link } = await mailedSecrets(smtp, email, since);
      expect((await pressLinkButton(phone, link)).status).toBe(200);
      expect(await sessionEmail(phone)).toBe(email);
      const mail = await smtp.mailTo(email, since, notice);
      expect(mail.parsed.text).toContain('Network: 198.51.100.0/24');

      // The same device, by e-mail again: no second notice.
      const again = smtp.received.length;
      await phone.signOut();
      await askMail(phone, email);
      const second = await mailedSecrets(smtp, email, again);
      expect((await pressLinkButton(phone, second.link)).status).toBe(200);
      expect(await sessionEmail(phone)).toBe(email);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const notices = smtp.received.filter(
        (received) =>
          received.envelopeTo.includes(email) && notice.test(received.parsed.subject ?? ''),
      );
      expect(notices).toHaveLength(1);
    },
    60_000,
  );
});
