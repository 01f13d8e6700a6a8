import { lockHtml, lockText } from '../../mail/builtin-templates.js';
import type { MailCatalogue, MailWords } from '../../mail/catalogue.js';

/** A notice about an identity: what happened with `{{providerName}}`, and the way out. */
function identityNotice(subject: string, what: string): MailWords {
  return {
    subject,
    text: `Hello{{#name}} {{name}}{{/name}},

${what}
${lockText}`,
    html: `<p>Hello{{#name}} {{name}}{{/name}},</p>
<p>${what}</p>
${lockHtml}`,
    required: ['lockLink', 'providerName'],
    priority: 0,
  };
}

/** The notices a linked or unlinked identity sends its account's owner; they go first. */
export const identityMails: MailCatalogue = {
  // Asked for on the sign-in page by someone whose provider gave this account's address: the
  // code proves the mailbox, so the provider can be linked; nothing changes without it.
  'identity-link-code': {
    subject: 'Your code to link {{providerName}} to your {{productName}} account',
    text: `Hello{{#name}} {{name}}{{/name}},

Someone signed in with {{providerName}} using this address and asked to link it to your
{{productName}} account ({{to}}). If that is you, enter this code on the sign-in page:

Your code: {{code}}
{{#expiresInMinutes}}
The code expires in {{expiresInMinutes}} minutes.{{/expiresInMinutes}}

If this was not you, ignore this mail: nothing is linked without the code.`,
    html: `<p>Hello{{#name}} {{name}}{{/name}},</p>
<p>Someone signed in with {{providerName}} using this address and asked to link it to your
{{productName}} account ({{to}}). If that is you, enter this code on the sign-in page:</p>
<p>Your code: <strong>{{code}}</strong></p>
{{#expiresInMinutes}}<p>The code expires in {{expiresInMinutes}} minutes.</p>{{/expiresInMinutes}}
<p>If this was not you, ignore this mail: nothing is linked without the code.</p>`,
    required: ['code', 'providerName'],
    priority: 0,
  },
  'identity-linked-notice': identityNotice(
    'Sign-in with {{providerName}} was added to your {{productName}} account',
    'A {{providerName}} account was just linked to your {{productName}} account ({{to}}). It can now be used to sign in.',
  ),
  'identity-unlinked-notice': identityNotice(
    'Sign-in with {{providerName}} was removed from your {{productName}} account',
    'The {{providerName}} account linked to your {{productName}} account ({{to}}) was just unlinked. It can no longer be used to sign in.',
  ),
};
