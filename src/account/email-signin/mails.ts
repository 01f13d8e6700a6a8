import type { MailCatalogue, MailWords } from '../../mail/catalogue.js';

/*
 * The mails a sign-in by e-mail sends (src/account/email-signin/): one mail a request, the same
 * request answered alike whichever of them went (or none). A person waits for each of them at
 * the sign-in page, so they go first.
 */

// The link signs in whoever opens it and presses the page's button; the code only the browser
// that asked (it is bound to that browser), so the mail says where each one works.
const secretsText = `{{link}}

Or, in the browser where you asked, enter this code on the page: {{code}}
{{#expiresInMinutes}}
The link and the code expire in {{expiresInMinutes}} minutes, and work once.{{/expiresInMinutes}}`;
const secretsHtml = (label: string) =>
  `<p><a href="{{link}}" style="display:inline-block;padding:10px 18px;background:#2563eb;color:#fff;border-radius:6px;text-decoration:none">${label}</a></p>
<p style="font-size:13px;color:#555">Or open this address: {{link}}</p>
<p>Or, in the browser where you asked, enter this code on the page: <strong style="font-size:18px;letter-spacing:2px">{{code}}</strong></p>{{#expiresInMinutes}}
<p>The link and the code expire in {{expiresInMinutes}} minutes, and work once.</p>{{/expiresInMinutes}}`;

/**
 * A mail with the link and the code: its greeting, what was asked and what the link does, the
 * link's button, and what to do if it was not you. Paragraphs are written wrapped for the text
 * body and joined for the HTML one.
 */
function withSecrets(words: {
  subject: string;
  greeting: string;
  asked: string;
  button: string;
  notYou: string;
}): MailWords {
  const html = (paragraph: string) => `<p>${paragraph.replaceAll('\n', ' ')}</p>`;
  return {
    subject: words.subject,
    text: `${words.greeting}\n\n${words.asked}\n${secretsText}\n\n${words.notYou}`,
    html: `${html(words.greeting)}\n${html(words.asked)}\n${secretsHtml(words.button)}\n${html(words.notYou)}`,
    required: ['link', 'code'],
    priority: 0,
  };
}

export const emailSignInMails: MailCatalogue = {
  'email-signin': withSecrets({
    subject: 'Sign in to {{productName}}',
    greeting: 'Hello{{#name}} {{name}}{{/name}},',
    asked: `Someone asked to sign in to your {{productName}} account ({{to}}) with a link by mail. To sign
in, open this link and press the button on the page:`,
    button: 'Sign in',
    notYou:
      'If you did not ask for this, ignore this mail: nobody can sign in with it but whoever reads it.',
  }),
  // SIGNUP=open: no name in it, as in the sign-up's own mail (nobody has proven the address).
  'email-signin-new-account': withSecrets({
    subject: 'Create your {{productName}} account',
    greeting: 'Hello,',
    asked: `Someone asked to sign in to {{productName}} with this address ({{to}}), which has no account
yet. To create the account and sign in, open this link and press the button on the page:`,
    button: 'Create my account',
    notYou: `If this was not you, ignore this mail: no account is made unless someone uses this link or
code, and nobody else has them.`,
  }),
  // SIGNUP=closed: the page said "check your inbox" to everyone, so the mailbox hears why.
  'email-signin-no-account': {
    subject: 'No {{productName}} account for this address',
    text: `Hello,

Someone asked to sign in to {{productName}} with this address ({{to}}), but no account was
found for it, so this mail has no link. If you have an account, it may be under another
address.{{#supportContact}} For help, contact {{supportContact}}.{{/supportContact}}

If this was not you, ignore this mail.`,
    html: `<p>Hello,</p>
<p>Someone asked to sign in to {{productName}} with this address ({{to}}), but no account was found for it, so this mail has no link. If you have an account, it may be under another address.{{#supportContact}} For help, contact {{supportContact}}.{{/supportContact}}</p>
<p>If this was not you, ignore this mail.</p>`,
    required: [],
    priority: 0,
  },
};
