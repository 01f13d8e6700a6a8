import { lockHtml, lockText } from '../../mail/builtin-templates.js';
import type { MailCatalogue } from '../../mail/catalogue.js';

/**
 * Two-step sign-in's mails: the notice of a change to it (on, off, new recovery codes, one used,
 * the step locked) and the code an enrolment at sign-in sends. Both go first in the queue: the
 * code lives five minutes, as the sign-in waiting for it does.
 */
export const totpMails: MailCatalogue = {
  'second-factor-notice': {
    subject: 'Two-step sign-in on your {{productName}} account',
    text: `Hello{{#name}} {{name}}{{/name}},

About two-step sign-in of your {{productName}} account ({{to}}):
{{change}}{{#recoveryCodesLeft}}
Recovery codes left unused: {{recoveryCodesLeft}}.{{/recoveryCodesLeft}}
${lockText}`,
    html: `<p>Hello{{#name}} {{name}}{{/name}},</p>
<p>About two-step sign-in of your {{productName}} account ({{to}}):</p>
<p>{{change}}</p>{{#recoveryCodesLeft}}
<p>Recovery codes left unused: {{recoveryCodesLeft}}.</p>{{/recoveryCodesLeft}}
${lockHtml}`,
    required: ['lockLink', 'change'],
    priority: 0,
  },
  // Sent when someone with the password starts enrolling an authenticator app at sign-in
  // (SECOND_FACTOR=required): the code proves the mailbox, and tells its owner if it was not them.
  'signin-enrolment-code': {
    subject: 'Your code to set up two-step sign-in for {{productName}}',
    text: `Hello{{#name}} {{name}}{{/name}},

Someone signed in to your {{productName}} account ({{to}}) with its password and is setting up
two-step sign-in with an authenticator app. If that is you, enter this code on the sign-in page,
beside the code your app shows:

Your code: {{code}}
{{#expiresInMinutes}}
The code expires in {{expiresInMinutes}} minutes. It works for that sign-in only.{{/expiresInMinutes}}

If this was not you, give this code to nobody: someone knows your password. Choose a new
password with "Forgot your password?" on the sign-in page.
${lockText}`,
    html: `<p>Hello{{#name}} {{name}}{{/name}},</p>
<p>Someone signed in to your {{productName}} account ({{to}}) with its password and is setting up two-step sign-in with an authenticator app. If that is you, enter this code on the sign-in page, beside the code your app shows:</p>
<p>Your code: <strong style="font-size:18px;letter-spacing:2px">{{code}}</strong></p>{{#expiresInMinutes}}
<p>The code expires in {{expiresInMinutes}} minutes. It works for that sign-in only.</p>{{/expiresInMinutes}}
<p>If this was not you, give this code to nobody: someone knows your password. Choose a new password with &ldquo;Forgot your password?&rdquo; on the sign-in page.</p>
${lockHtml}`,
    required: ['code', 'lockLink'],
    priority: 0,
  },
};
