import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { registeredMails } from '../../src/account/upkeep-registry.js';
import { builtinMails } from '../../src/mail/builtin-templates.js';
import { joinMailCatalogues, type MailCatalogue } from '../../src/mail/catalogue.js';
import { createMailRenderer, readTemplateDir } from '../../src/mail/templates.js';
import { runNode } from '../helpers/spawn.js';

const dirs: string[] = [];
function tempDir(files: Record<string, string> = {}): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-mail-config-'));
  dirs.push(dir);
  for (const [name, content] of Object.entries(files))
    fs.writeFileSync(path.join(dir, name), content);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

const mailKinds = Object.keys(registeredMails);

const problemsOf = (env: NodeJS.ProcessEnv) => {
  const result = parseConfig(env, { mails: registeredMails });
  return result.ok ? [] : result.problems;
};

describe('mail configuration', () => {
  it('takes an smtp:// or smtps:// URL with a sender, and keeps neither out of the config', () => {
    const result = parseConfig({
      SMTP_URL: 'smtps://mailer:s3cret%40pw@smtp.example.com:465',
      MAIL_FROM: '"Example, Inc." <no-reply@example.com>',
    });
    expect(result.ok && result.config.mail).toMatchObject({
      smtpUrl: 'smtps://mailer:s3cret%40pw@smtp.example.com:465',
      from: '"Example, Inc." <no-reply@example.com>',
      retryBaseSeconds: 30,
    });
  });

  it('without SMTP_URL (or with it empty) mail is not configured', () => {
    for (const env of [{}, { SMTP_URL: '', MAIL_FROM: '' }]) {
      const result = parseConfig(env);
      expect(result.ok && result.config.mail.smtpUrl).toBeUndefined();
    }
  });

  it.each([
    [
      { SMTP_URL: 'http://mailer:hunter2hunter2@smtp.example.com', MAIL_FROM: 'a@example.com' },
      'SMTP_URL: must be an smtp:// or smtps:// URL with a host, credentials percent-encoded in it (e.g. SMTP_URL=smtps://user:password@smtp.example.com:465)',
    ],
    [
      { SMTP_URL: 'smtp://mailer:hunter2hunter2@/', MAIL_FROM: 'a@example.com' },
      'SMTP_URL: must be an smtp:// or smtps:// URL with a host, credentials percent-encoded in it (e.g. SMTP_URL=smtps://user:password@smtp.example.com:465)',
    ],
    [
      { SMTP_URL: 'smtp://smtp.example.com' },
      'MAIL_FROM: is required when SMTP_URL is set: the sender, e.g. MAIL_FROM=Gatehouse <no-reply@example.com>',
    ],
    [
      { SMTP_URL: 'smtp://smtp.example.com', MAIL_FROM: 'a@example.com, b@example.com' },
      'MAIL_FROM: must be one address, optionally with a name (e.g. MAIL_FROM=Gatehouse <no-reply@example.com>)',
    ],
    [
      { MAIL_FROM: 'Name <no-reply@example.com>\r\nBcc: x@example.com' },
      'MAIL_FROM: must be one address, optionally with a name (e.g. MAIL_FROM=Gatehouse <no-reply@example.com>)',
    ],
    [
      { MAIL_RETRY_SECONDS: '0' },
      'MAIL_RETRY_SECONDS: must be a whole number from 1 to 3600 (e.g. MAIL_RETRY_SECONDS=30)',
    ],
  ])('refuses %j, naming the variable and never the password', (env, problem) => {
    const problems = problemsOf(env);
    expect(problems).toEqual([problem]);
    expect(problems.join('\n')).not.toContain('hunter2');
  });

  it('reads SMTP_URL_FILE as a secret file, and refuses it with SMTP_URL', () => {
    const dir = tempDir({ 'smtp-url': 'smtp://u:p@smtp.example.com:587\n' });
    const file = path.join(dir, 'smtp-url');
    const result = parseConfig({ SMTP_URL_FILE: file, MAIL_FROM: 'a@example.com' });
    expect(result.ok && result.config.mail.smtpUrl).toBe('smtp://u:p@smtp.example.com:587');
    expect(
      problemsOf({ SMTP_URL_FILE: file, SMTP_URL: 'smtp://x', MAIL_FROM: 'a@example.com' }),
    ).toEqual(['SMTP_URL: both SMTP_URL and SMTP_URL_FILE are set; set only one']);
  });

  it('refuses a templates folder whose files name no kind, do not parse or read unknown values, naming each file', () => {
    const dir = tempDir({
      'pasword-reset.txt': 'Hi',
      'invitation.html': '<p>{{#link}}<a href="{{link}}">join</a></p>',
      'test.txt': 'Hello {{resetLink}}',
      'test.subject': 'line one\nline two',
      'README.md': 'not a template: ignored',
    });
    expect(problemsOf({ MAIL_TEMPLATES_DIR: dir })).toEqual([
      'MAIL_TEMPLATES_DIR: invitation.html: {{#link}} is never closed',
      `MAIL_TEMPLATES_DIR: pasword-reset.txt: "pasword-reset" is not a mail kind (one of ${mailKinds.join(', ')})`,
      'MAIL_TEMPLATES_DIR: test.subject: a subject is one line',
      'MAIL_TEMPLATES_DIR: test.txt: reads {{resetLink}}, not a value mails have (productName, origin, supportContact, to, name, link, code, lockLink, expiresInMinutes, expiresInDays, newEmail, oldEmail, change, recoveryCodesLeft, tokenName, signedInAt, deviceName, network)',
    ]);
    expect(problemsOf({ MAIL_TEMPLATES_DIR: path.join(dir, 'missing') })).toEqual([
      `MAIL_TEMPLATES_DIR: cannot read the folder ${path.join(dir, 'missing')} (ENOENT) (e.g. MAIL_TEMPLATES_DIR=/etc/gatehouse/mail)`,
    ]);
  });

  it("uses an operator's template for the parts it replaces and the built-in ones for the rest", () => {
    const dir = tempDir({
      'password-reset.subject': '{{productName}}: new password',
      'password-reset.html':
        '<p>Hi {{name}}, <a href="{{link}}">reset</a>{{#code}} or {{code}}{{/code}}</p>',
    });
    const result = parseConfig({ MAIL_TEMPLATES_DIR: dir }, { mails: registeredMails });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const renderer = createMailRenderer(
      { productName: 'Acme', origin: 'https://id.acme.test' },
      result.config.mail.templates,
      result.config.mail.mails,
    );
    const mail = renderer.render('password-reset', {
      to: 'ada@example.com',
      name: '<b>Ada</b>',
      link: 'https://id.acme.test/account/reset?t="x"',
    });
    expect(mail.subject).toBe('Acme: new password');
    expect(mail.html).toBe(
      '<p>Hi &lt;b&gt;Ada&lt;/b&gt;, <a href="https://id.acme.test/account/reset?t=&quot;x&quot;">reset</a></p>',
    );
    expect(mail.text).toContain('https://id.acme.test/account/reset?t="x"');
  });

  it('a broken template stops the built service with the file named', async () => {
    const dir = tempDir({ 'test.txt': 'Hello {{#name}}' });
    const result = await runNode('gatehouse.mjs', [], {
      DATA_DIR: tempDir(),
      MAIL_TEMPLATES_DIR: dir,
      PORT: '0',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'gatehouse: invalid configuration\n  - MAIL_TEMPLATES_DIR: test.txt: {{#name}} is never closed\n',
    );
  });
});

describe('the built-in templates', () => {
  const renderer = createMailRenderer(
    { productName: 'Acme & Co', origin: 'https://id.acme.test' },
    {},
    registeredMails,
  );
  const values = {
    to: 'ada@example.com',
    name: 'Ada',
    link: 'https://id.acme.test/account/x?token=t1',
    code: 'ABCD-1234',
    lockLink: 'https://id.acme.test/account/lock?token=l1',
    expiresInMinutes: '60',
    expiresInDays: '7',
    newEmail: 'new@example.com',
    change: 'Two-step sign-in was turned on.',
    passkeyName: 'My laptop',
    providerName: 'GitHub',
    tokenName: 'Nightly export',
    signedInAt: '3 March 2026, 09:05 UTC',
    deviceName: 'Firefox 130 on Linux',
    network: '198.51.100.0/24',
  };

  it.each(mailKinds.map((kind) => ({ kind })))(
    '$kind: a subject, a text and an HTML body naming the product, with its link',
    ({ kind }) => {
      const mail = renderer.render(kind, values);
      expect(mail.subject).toContain('Acme & Co');
      expect(mail.text).toContain('Acme & Co');
      expect(mail.html).toContain('Acme &amp; Co');
      expect(mail.html).toMatch(/^<!doctype html>/);
      expect(mail.html).toContain('https://id.acme.test');
      expect(mail.text).not.toMatch(/\{\{|\}\}/);
      if (
        [
          'password-reset',
          'email-verification',
          'email-change',
          'invitation',
          'signup-confirmation',
          'email-signin',
          'email-signin-new-account',
        ].includes(kind)
      ) {
        expect(mail.text).toContain(values.link);
        expect(mail.html).toContain(`href="${values.link}"`);
      }
      if (kind.endsWith('-notice') && kind !== 'account-locked-notice') {
        expect(mail.text).toContain(values.lockLink);
        expect(mail.html).toContain(`href="${values.lockLink}"`);
      }
    },
  );

  it('a mail without the link its kind needs is a bug, refused before it is queued', () => {
    expect(() => renderer.render('password-reset', { to: 'ada@example.com' })).toThrow(
      'a password-reset mail needs the value link',
    );
    expect(() => renderer.render('password-changed-notice', { to: 'ada@example.com' })).toThrow(
      'a password-changed-notice mail needs the value lockLink',
    );
  });

  it('optional parts drop out when their value is missing', () => {
    const mail = renderer.render('password-reset', {
      to: 'a@example.com',
      link: 'https://x.test/r',
      name: 'Eve',
    });
    expect(mail.text).not.toContain('Or enter this code');
    expect(mail.text).toContain('Hello Eve,');
  });
});

describe('mail kinds a way in declares', () => {
  const magicLink: MailCatalogue = {
    'magic-link': {
      subject: 'Sign in to {{productName}}',
      text: 'Open {{link}} to sign in.',
      html: '<p><a href="{{link}}">Sign in</a></p>',
      required: ['link'],
      priority: 0,
    },
  };
  const mails = joinMailCatalogues(builtinMails, magicLink);

  it("renders a kind registered beside its way in, with its own words, and queues it at the way in's priority", () => {
    const renderer = createMailRenderer({ productName: 'Acme', origin: undefined }, {}, mails);
    const mail = renderer.render('magic-link', { to: 'ada@example.com', link: 'https://x.test/m' });
    expect(mail.subject).toBe('Sign in to Acme');
    expect(mail.text).toBe('Open https://x.test/m to sign in.');
    expect(mail.html).toContain('<p><a href="https://x.test/m">Sign in</a></p>');
    expect(renderer.priorityOf('magic-link')).toBe(0);
    expect(renderer.priorityOf('invitation')).toBe(1);
    expect(() => renderer.render('second-factor-notice', { to: 'ada@example.com' })).toThrow(
      'no mail template for kind second-factor-notice',
    );
  });

  it('MAIL_TEMPLATES_DIR may replace the words of any registered kind, and only those', () => {
    const dir = tempDir({ 'magic-link.subject': '{{productName}}: your link' });
    expect(readTemplateDir(dir, mails)).toMatchObject({
      overrides: { 'magic-link': { subject: '{{productName}}: your link' } },
      problems: [],
    });
    expect(readTemplateDir(dir, builtinMails).problems).toEqual([
      `magic-link.subject: "magic-link" is not a mail kind (one of ${Object.keys(builtinMails).join(', ')})`,
    ]);
  });

  it('the registered ways in bring their kinds: two-step sign-in, passkeys, sign-in by e-mail; access tokens theirs', () => {
    expect(mailKinds).toEqual(
      expect.arrayContaining([
        'second-factor-notice',
        'signin-enrolment-code',
        'passkey-added-notice',
        'passkey-removed-notice',
        'email-signin',
        'email-signin-new-account',
        'email-signin-no-account',
        'access-token-created-notice',
      ]),
    );
    expect(Object.keys(builtinMails)).not.toContain('second-factor-notice');
  });

  it('a kind declared twice is a bug of the registry, refused when the catalogues are joined', () => {
    expect(() => joinMailCatalogues(mails, magicLink)).toThrow(
      'the mail kind magic-link is declared twice',
    );
  });
});
