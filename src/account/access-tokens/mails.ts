import { lockHtml, lockText } from '../../mail/builtin-templates.js';
import type { MailCatalogue } from '../../mail/catalogue.js';

/** The notice a new access token sends its account's owner; it goes first in the queue. */
export const accessTokenMails: MailCatalogue = {
  'access-token-created-notice': {
    subject: 'A new access token was created for your {{productName}} account',
    text: `Hello{{#name}} {{name}}{{/name}},

A new access token named "{{tokenName}}" was just created for your {{productName}} account
({{to}}). A script or another service holding it can act as you until it is revoked or
expires. If this was you, there is nothing to do; you can revoke it on your account page.
Locking your account ends every access token.
${lockText}`,
    html: `<p>Hello{{#name}} {{name}}{{/name}},</p>
<p>A new access token named &ldquo;{{tokenName}}&rdquo; was just created for your {{productName}} account ({{to}}). A script or another service holding it can act as you until it is revoked or expires. If this was you, there is nothing to do; you can revoke it on your account page. Locking your account ends every access token.</p>
${lockHtml}`,
    required: ['lockLink', 'tokenName'],
    priority: 0,
  },
};
