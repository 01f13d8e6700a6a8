import { lockHtml, lockText } from '../../mail/builtin-templates.js';
import type { MailCatalogue } from '../../mail/catalogue.js';

/** The notices a passkey added or removed sends its account's owner; they go first in the queue. */
export const passkeyMails: MailCatalogue = {
  'passkey-added-notice': {
    subject: 'A passkey was added to your {{productName}} account',
    text: `Hello{{#name}} {{name}}{{/name}},

A passkey named "{{passkeyName}}" was just added to your {{productName}} account ({{to}}). It can now be used to sign in.
${lockText}`,
    html: `<p>Hello{{#name}} {{name}}{{/name}},</p>
<p>A passkey named &ldquo;{{passkeyName}}&rdquo; was just added to your {{productName}} account ({{to}}). It can now be used to sign in.</p>
${lockHtml}`,
    required: ['lockLink', 'passkeyName'],
    priority: 0,
  },
  'passkey-removed-notice': {
    subject: 'A passkey was removed from your {{productName}} account',
    text: `Hello{{#name}} {{name}}{{/name}},

The passkey named "{{passkeyName}}" was just removed from your {{productName}} account ({{to}}). It can no longer be used to sign in.
${lockText}`,
    html: `<p>Hello{{#name}} {{name}}{{/name}},</p>
<p>The passkey named &ldquo;{{passkeyName}}&rdquo; was just removed from your {{productName}} account ({{to}}). It can no longer be used to sign in.</p>
${lockHtml}`,
    required: ['lockLink', 'passkeyName'],
    priority: 0,
  },
};
