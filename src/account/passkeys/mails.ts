import { lockHtml, lockText } from '../../mail/builtin-templates.js';
import type { MailCatalogue, MailWords } from '../../mail/catalogue.js';

/** A notice about one passkey: what happened to it (`{{passkeyName}}` quoted), and the way out. */
function passkeyNotice(subject: string, what: { before: string; after: string }): MailWords {
  return {
    subject,
    text: `Hello{{#name}} {{name}}{{/name}},

${what.before} "{{passkeyName}}" ${what.after}
${lockText}`,
    html: `<p>Hello{{#name}} {{name}}{{/name}},</p>
<p>${what.before} &ldquo;{{passkeyName}}&rdquo; ${what.after}</p>
${lockHtml}`,
    required: ['lockLink', 'passkeyName'],
    priority: 0,
  };
}

/** The notices a passkey added or removed sends its account's owner; they go first in the queue. */
export const passkeyMails: MailCatalogue = {
  'passkey-added-notice': passkeyNotice('A passkey was added to your {{productName}} account', {
    before: 'A passkey named',
    after:
      'was just added to your {{productName}} account ({{to}}). It can now be used to sign in.',
  }),
  'passkey-removed-notice': passkeyNotice(
    'A passkey was removed from your {{productName}} account',
    {
      before: 'The passkey named',
      after:
        'was just removed from your {{productName}} account ({{to}}). It can no longer be used to sign in.',
    },
  ),
};
