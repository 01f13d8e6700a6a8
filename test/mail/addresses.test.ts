import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCode, postWithCsrf as post } from '../helpers/account-requests.js';
import { Client } from '../helpers/client.js';
import { startMailService, type MailService } from '../account/account-service.js';

/*
 * An address is one mailbox (issue 25.8): every door an address comes in by (the JSON routes,
 * the pages' form posts, the CLI) takes a bare `local@domain` and nothing a mail library would
 * parse again into another mailbox. Black-box: the service in process and
 * a real SMTP server on loopback, whose envelope shows where a mail really went.
 */

const password = 'correct horse battery staple';
const victim = 'victim@example.com';

/** Addresses that name, or smuggle in, a mailbox other than the string itself. */
const notOneMailbox: [string, string][] = [
  ['a display name before the mailbox', `owner<${victim}>`],
  ['a quoted display name', `"Owner" <${victim}>`],
  ['the mailbox in brackets alone', `<${victim}>`],
  ['a list of two', `mine@example.com,${victim}`],
  ['a list with a semicolon', `mine@example.com;${victim}`],
  ['a header injected after a line break', `mine@example.com\r\nBcc: ${victim}`],
  ['a control character inside', `mine\u0007@example.com`],
  ['fullwidth brackets NFKC turns into real ones', `owner\uff1c${victim}\uff1e`],
];

describe('an address is one mailbox', () => {
  let mailed: MailService;

  beforeAll(async () => {
    mailed = await startMailService({
      users: ['ada@example.com'],
      password,
      env: { SIGNUP: 'open', THROTTLE_IP_MAX_FAILURES: '1000' },
    });
  });
  afterAll(async () => {
    await mailed?.close();
  });

  it.each(notOneMailbox)(
    'an address change to %s is refused, and no mail reaches the mailbox inside it',
    async (_what, address) => {
      const client = new Client(mailed.service.url);
      expect((await client.signIn('ada@example.com', password)).status).toBe(200);
      const since = mailed.smtp.received.length;
      const refused = await post(client, '/api/account/email/change', { email: address });
      expect(await errorCode(refused)).toBe('422 invalid_field');
      // A plain change afterwards: its mail is the proof the outbox has been worked through.
      const fresh = `ada+${since}@example.com`;
      const accepted = await post(client, '/api/account/email/change', { email: fresh });
      expect(accepted.status).toBe(202);
      await mailed.smtp.mailTo(fresh, since);
      const recipients = mailed.smtp.received.slice(since).flatMap((m) => m.envelopeTo);
      expect(recipients).toEqual([fresh]);
    },
  );

  it.each(notOneMailbox)('a sign-up with %s is refused', async (_what, address) => {
    const client = new Client(mailed.service.url);
    const response = await post(client, '/api/account/signup', {
      email: address,
      name: 'Mallory',
      password: 'a long and unusual passphrase 7',
    });
    expect(await errorCode(response)).toBe('422 invalid_field');
  });

  it('the CLI refuses to add or invite an address that is not one mailbox, and mails nobody', async () => {
    for (const [, address] of notOneMailbox) {
      const added = await mailed.service.cli(
        ['users', 'add', '--email', address, '--password-stdin'],
        password,
      );
      expect([added.code, added.stderr]).toEqual([
        2,
        'gatehouse: --email is not an email address\n',
      ]);
      const invited = await mailed.service.cli(['users', 'invite', '--email', address]);
      expect(invited.code).toBe(2);
    }
    const listed = await mailed.service.cli(['users', 'list', '--json']);
    expect(listed.stdout).not.toContain(victim);
    expect(mailed.smtp.received.flatMap((m) => m.envelopeTo)).not.toContain(victim);
  });
});
