import type { MailCatalogue } from './catalogue.js';

/** A security notice's way out, which every notice ends with. */
export const lockText = `
If this was not you, lock your account now (you can ask your administrator to unlock it):
{{lockLink}}`;
export const lockHtml = `
<p>If this was not you, lock your account now (you can ask your administrator to unlock it):</p>
<p><a href="{{lockLink}}">This wasn't me: lock my account</a></p>`;
const codeText = `{{#code}}
Or enter this code on the page: {{code}}
{{/code}}{{#expiresInMinutes}}
The link expires in {{expiresInMinutes}} minutes.{{/expiresInMinutes}}`;
const codeHtml = `{{#code}}
<p>Or enter this code on the page: <strong style="font-size:18px;letter-spacing:2px">{{code}}</strong></p>{{/code}}{{#expiresInMinutes}}
<p>The link expires in {{expiresInMinutes}} minutes.</p>{{/expiresInMinutes}}`;
const button = (label: string) =>
  `<p><a href="{{link}}" style="display:inline-block;padding:10px 18px;background:#2563eb;color:#fff;border-radius:6px;text-decoration:none">${label}</a></p>
<p style="font-size:13px;color:#555">Or open this address: {{link}}</p>`;

/**
 * The kinds of the account's own flows (reset, address, sign-up, invitation, lock) and the
 * operator's `mail test`; each way in declares its own beside it (`totp/mails.ts`, …).
 */
export const builtinMails: MailCatalogue = {
  'password-reset': {
    subject: 'Reset your {{productName}} password',
    text: `Hello{{#name}} {{name}}{{/name}},

Someone asked to reset the password of your {{productName}} account ({{to}}). To choose a new
password, open this link and type it, twice, on the page:
{{link}}
${codeText}

If you did not ask for this, ignore this mail: your password stays as it is.`,
    html: `<p>Hello{{#name}} {{name}}{{/name}},</p>
<p>Someone asked to reset the password of your {{productName}} account ({{to}}). To choose a new password, open this link and type it, twice, on the page:</p>
${button('Choose a new password')}${codeHtml}
<p>If you did not ask for this, ignore this mail: your password stays as it is.</p>`,
    required: ['link'],
    priority: 0,
  },
  'email-verification': {
    subject: 'Confirm your address for {{productName}}',
    text: `Hello{{#name}} {{name}}{{/name}},

Please confirm that {{to}} is your address for {{productName}}: open this link and press the
button on the page:
{{link}}
${codeText}`,
    html: `<p>Hello{{#name}} {{name}}{{/name}},</p>
<p>Please confirm that {{to}} is your address for {{productName}}: open this link and press the button on the page:</p>
${button('Confirm my address')}${codeHtml}`,
    required: ['link'],
    priority: 1,
  },
  'email-change': {
    subject: 'Confirm your new address for {{productName}}',
    text: `Hello{{#name}} {{name}}{{/name}},

Someone asked to move a {{productName}} account to this address ({{to}}). To confirm, open this
link and press the button on the page:
{{link}}
${codeText}

If you did not ask for this, ignore this mail: nothing changes.`,
    html: `<p>Hello{{#name}} {{name}}{{/name}},</p>
<p>Someone asked to move a {{productName}} account to this address ({{to}}). To confirm, open this link and press the button on the page:</p>
${button('Confirm my new address')}${codeHtml}
<p>If you did not ask for this, ignore this mail: nothing changes.</p>`,
    required: ['link'],
    priority: 1,
  },
  'email-changed-notice': {
    subject: 'The address of your {{productName}} account was changed',
    text: `Hello{{#name}} {{name}}{{/name}},

The address of your {{productName}} account was changed from {{to}}{{#newEmail}} to {{newEmail}}{{/newEmail}}. Mail about the account now goes to the new address.
${lockText}`,
    html: `<p>Hello{{#name}} {{name}}{{/name}},</p>
<p>The address of your {{productName}} account was changed from {{to}}{{#newEmail}} to {{newEmail}}{{/newEmail}}. Mail about the account now goes to the new address.</p>
${lockHtml}`,
    required: ['lockLink'],
    priority: 0,
  },
  'password-changed-notice': {
    subject: 'Your {{productName}} password was changed',
    text: `Hello{{#name}} {{name}}{{/name}},

The password of your {{productName}} account ({{to}}) was just changed, and its sessions on other devices were signed out.
${lockText}`,
    html: `<p>Hello{{#name}} {{name}}{{/name}},</p>
<p>The password of your {{productName}} account ({{to}}) was just changed, and its sessions on other devices were signed out.</p>
${lockHtml}`,
    required: ['lockLink'],
    priority: 0,
  },
  'account-exists': {
    subject: 'You already have a {{productName}} account',
    text: `Hello{{#name}} {{name}}{{/name}},

Someone tried to create a {{productName}} account for {{to}}, but you already have one, so
nothing changed.{{#link}} Forgot your password? Choose a new one here:
{{link}}{{/link}}

If this was not you, ignore this mail.`,
    html: `<p>Hello{{#name}} {{name}}{{/name}},</p>
<p>Someone tried to create a {{productName}} account for {{to}}, but you already have one, so nothing changed.</p>{{#link}}
<p>Forgot your password? <a href="{{link}}">Choose a new one</a>.</p>{{/link}}
<p>If this was not you, ignore this mail.</p>`,
    required: [],
    priority: 1,
  },
  // No name in it: whoever signed up typed the name, and nobody has proven the address yet.
  'signup-confirmation': {
    subject: 'Confirm your address for {{productName}}',
    text: `Hello,

Someone signed up for {{productName}} with this address ({{to}}). To create the account,
open this link and choose its password:
{{link}}
${codeText}

If this was not you, ignore this mail: no account is made unless someone opens this link
from your mailbox, and nobody else has it.`,
    html: `<p>Hello,</p>
<p>Someone signed up for {{productName}} with this address ({{to}}). To create the account, open this link and choose its password:</p>
${button('Confirm my address')}${codeHtml}
<p>If this was not you, ignore this mail: no account is made unless someone opens this link from your mailbox, and nobody else has it.</p>`,
    required: ['link'],
    priority: 1,
  },
  invitation: {
    subject: "You're invited to {{productName}}",
    text: `Hello{{#name}} {{name}}{{/name}},

You are invited to {{productName}}. To accept, open this link and choose your password:
{{link}}
{{#expiresInDays}}
The invitation expires in {{expiresInDays}} days.{{/expiresInDays}}{{#expiresInMinutes}}
The invitation expires in {{expiresInMinutes}} minutes.{{/expiresInMinutes}}`,
    html: `<p>Hello{{#name}} {{name}}{{/name}},</p>
<p>You are invited to {{productName}}. To accept, open this link and choose your password:</p>
${button('Accept the invitation')}{{#expiresInDays}}
<p>The invitation expires in {{expiresInDays}} days.</p>{{/expiresInDays}}{{#expiresInMinutes}}
<p>The invitation expires in {{expiresInMinutes}} minutes.</p>{{/expiresInMinutes}}`,
    required: ['link'],
    priority: 1,
  },
  'account-locked-notice': {
    subject: 'Your {{productName}} account is locked',
    text: `Hello{{#name}} {{name}}{{/name}},

Your {{productName}} account ({{to}}) was just locked with the "this wasn't me" link of a
security notice: every session of it was signed out, and nobody can sign in until it is
unlocked.

To use it again, contact {{#supportContact}}{{supportContact}}{{/supportContact}}{{^supportContact}}your administrator{{/supportContact}}: they can unlock it. Then choose a new
password with "Forgot your password?" if someone else may know yours. If you did not lock it,
tell them that too.`,
    html: `<p>Hello{{#name}} {{name}}{{/name}},</p>
<p>Your {{productName}} account ({{to}}) was just locked with the "this wasn't me" link of a security notice: every session of it was signed out, and nobody can sign in until it is unlocked.</p>
<p>To use it again, contact {{#supportContact}}{{supportContact}}{{/supportContact}}{{^supportContact}}your administrator{{/supportContact}}: they can unlock it. Then choose a new password with "Forgot your password?" if someone else may know yours. If you did not lock it, tell them that too.</p>`,
    required: [],
    priority: 0,
  },
  test: {
    subject: 'Test mail from {{productName}}',
    text: `This is a test mail from {{productName}}{{#origin}} ({{origin}}){{/origin}}, sent with
\`gatehouse mail test\`. Mail delivery works.`,
    html: `<p>This is a test mail from {{productName}}{{#origin}} ({{origin}}){{/origin}}, sent with <code>gatehouse mail test</code>. Mail delivery works.</p>`,
    required: [],
    priority: 0,
  },
};

/** The document around every built-in HTML body: inline styles only, as mail clients need. */
export const htmlLayout = (content: string) => `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>{{productName}}</title></head>
<body style="margin:0;padding:24px;background:#f4f4f5;font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;font-size:15px;line-height:1.5;color:#18181b">
<div style="max-width:560px;margin:0 auto;background:#fff;border-radius:8px;padding:24px">
<h1 style="font-size:18px;margin:0 0 16px">{{productName}}</h1>
${content}
<p style="font-size:12px;color:#71717a;margin-top:24px">{{productName}}{{#origin}} · {{origin}}{{/origin}}</p>
</div>
</body>
</html>`;

/** Common to every kind, filled in by the queue. */
export const commonValues = ['productName', 'origin', 'supportContact', 'to'] as const;

/** What callers may give any kind; a template reading another name is refused at start-up. */
export const callerValues = [
  'name',
  'link',
  'code',
  'lockLink',
  'expiresInMinutes',
  'expiresInDays',
  'newEmail',
  'oldEmail',
  'change',
  'recoveryCodesLeft',
  'tokenName',
  'signedInAt',
  'deviceName',
  'network',
] as const;
