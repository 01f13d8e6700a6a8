import * as z from 'zod/mini';
import { builtinMails } from '../mail/builtin-templates.js';
import type { MailCatalogue } from '../mail/catalogue.js';
import { readTemplateDir, type TemplateOverrides } from '../mail/templates.js';
import { integer, optionalText } from './read/kinds.js';
import { noted } from './read/notes.js';

/**
 * `no-reply@example.com` or `Name <no-reply@example.com>` (a name with `,;:<>@` in it is
 * quoted: `"Example, Inc." <no-reply@example.com>`). One address, one line.
 */
const mailboxPattern =
  /^(?:(?:"[^"\r\n\\]*"|[^"<>,;:@\r\n]*)\s*<[^\s<>@",;]+@[^\s<>@",;]+\.[^\s<>@",;]+>|[^\s<>@",;]+@[^\s<>@",;]+\.[^\s<>@",;]+)$/;

function isSmtpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'smtp:' || url.protocol === 'smtps:') && url.hostname !== '';
  } catch {
    // Not a URL at all: refused with the message, which never repeats the value.
    return false;
  }
}

/**
 * Mail delivery: SMTP_URL (or SMTP_URL_FILE, src/config/read/secret-files.ts), the sender, the
 * operator's templates, the first retry's delay and the sending rate's cap. Problems never repeat SMTP_URL: it holds
 * the SMTP password. `mails`: every kind the service sends (the registered ways in declare theirs),
 * which MAIL_TEMPLATES_DIR's files must name; the config carries it on to the renderer.
 */
export const mail = (mails: MailCatalogue = builtinMails) =>
  z.pipe(
    z
      .object({
        SMTP_URL: noted(
          z.pipe(
            optionalText(),
            z.optional(
              z
                .string()
                .check(
                  z.refine(
                    isSmtpUrl,
                    'must be an smtp:// or smtps:// URL with a host, credentials percent-encoded in it',
                  ),
                ),
            ),
          ),
          {
            default: 'none (development: mail held in the outbox; production: mail off)',
            example: 'smtps://user:password@smtp.example.com:465',
          },
        ),
        MAIL_FROM: noted(
          z.pipe(
            optionalText(),
            z.optional(
              z
                .string()
                .check(z.regex(mailboxPattern, 'must be one address, optionally with a name')),
            ),
          ),
          { example: 'Gatehouse <no-reply@example.com>' },
        ),
        MAIL_TEMPLATES_DIR: noted(optionalText(), {
          default: 'none (the built-in templates)',
          example: '/etc/gatehouse/mail',
        }),
        MAIL_RETRY_SECONDS: integer(1, 3600, 30),
        MAIL_RATE_PER_MINUTE: integer(1, 100_000, 120),
      })
      .check(
        z.superRefine((e, ctx) => {
          if (e.SMTP_URL !== undefined && e.MAIL_FROM === undefined) {
            ctx.addIssue({
              code: 'custom',
              path: ['MAIL_FROM'],
              message:
                'is required when SMTP_URL is set: the sender, e.g. MAIL_FROM=Gatehouse <no-reply@example.com>',
            });
          }
        }),
      ),
    z.transform((e, ctx) => {
      let templates: TemplateOverrides = {};
      if (e.MAIL_TEMPLATES_DIR !== undefined) {
        // Read once, here: a broken template stops the start naming its file.
        const read = readTemplateDir(e.MAIL_TEMPLATES_DIR, mails);
        for (const problem of read.problems)
          ctx.issues.push({
            code: 'custom',
            path: ['MAIL_TEMPLATES_DIR'],
            message: problem,
            input: e.MAIL_TEMPLATES_DIR,
            // A problem in a file's content: an example of the folder's path would mislead.
            params: { example: !read.folderRead },
          });
        templates = read.overrides;
      }
      return {
        mail: {
          /** Undefined: development holds mail in the outbox, production turns the mail flows off. */
          smtpUrl: e.SMTP_URL,
          from: e.MAIL_FROM,
          templates,
          /** Every kind's words, which `templates` were checked against. */
          mails,
          /** The first retry's delay; each further one doubles (capped at 15 minutes). */
          retryBaseSeconds: e.MAIL_RETRY_SECONDS,
          /** Mails this instance starts sending per minute at most, all its processes together. */
          ratePerMinute: e.MAIL_RATE_PER_MINUTE,
        },
      };
    }),
  );
