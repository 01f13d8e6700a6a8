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
  'identity-linked-notice': identityNotice(
    'Sign-in with {{providerName}} was added to your {{productName}} account',
    'A {{providerName}} account was just linked to your {{productName}} account ({{to}}). It can now be used to sign in.',
  ),
  'identity-unlinked-notice': identityNotice(
    'Sign-in with {{providerName}} was removed from your {{productName}} account',
    'The {{providerName}} account linked to your {{productName}} account ({{to}}) was just unlinked. It can no longer be used to sign in.',
  ),
};
