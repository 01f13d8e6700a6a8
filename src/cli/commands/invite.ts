import { cliCommand } from '../../boot/cli-command.js';
import { createMail, mailSettingsOf } from '../../mail/start.js';
import { inviteUser } from '../../operator/operations.js';
import { cliActor, operatorPorts, requireEmail, type CliContext } from '../context.js';
import { CliError } from '../prompt.js';

export const help = `Usage: gatehouse users invite --email <email> [--name <name>] [--print-link]

Invites someone to create their account: a link to a page where they choose their own password
(you never see or choose it). The link works once, for INVITE_TTL seconds (7 days), and the
account it creates counts its address as verified. It is mailed ('invitation', through the
outbox), or with --print-link only printed here for you to pass on (nothing is mailed: for a
service without mail). Inviting an address again voids its earlier invitations: only the newest
link works. The address must have no account. The link is built on AUTH_URL, the service's public
origin, which must be set for this command.`;

// Control characters would break the pages and mails a name is printed in.
const controlCharacter = /\p{Cc}/u;

const noLogs = { info: () => undefined, warn: () => undefined };
const noEvents = { mailSent: () => undefined, mailFailed: () => undefined };

/** "7 days", "3 hours", "10 minutes": how long the link works, as a person says it. */
function lifetime(seconds: number): string {
  const [amount, unit] =
    seconds >= 2 * 86_400
      ? [Math.floor(seconds / 86_400), 'day']
      : seconds >= 2 * 3_600
        ? [Math.floor(seconds / 3_600), 'hour']
        : [Math.max(1, Math.floor(seconds / 60)), 'minute'];
  return `${amount} ${unit}${amount === 1 ? '' : 's'}`;
}

export async function run(
  context: CliContext,
  values: { email?: string; name?: string; 'print-link'?: boolean },
) {
  const email = requireEmail(values.email);
  const name = (values.name ?? '').normalize('NFC').trim();
  if (name.length > 200) throw new CliError('--name must be at most 200 characters', 2);
  if (controlCharacter.test(name)) throw new CliError('--name must not hold control characters', 2);
  const { config } = context;
  const origin = config.authUrl;
  if (origin === undefined)
    throw new CliError(
      "AUTH_URL is not set: the invitation link is built on the service's public origin; set it as the service has it, e.g. AUTH_URL=https://auth.example.com",
    );
  const printLink = values['print-link'] === true;
  const mail = printLink
    ? undefined
    : await createMail(context.db, context.dialect, mailSettingsOf(config), {
        log: noLogs,
        events: noEvents,
        // The running service delivers: the CLI only queues.
        deliver: false,
      });
  if (mail?.mode === 'off')
    throw new CliError(
      'mail is off (production without SMTP_URL), so the invitation cannot be mailed: set SMTP_URL (and MAIL_FROM), or use --print-link to print the link and pass it on yourself',
    );
  const ttlSeconds = config.inviteTtlSeconds;
  const issued = await inviteUser(
    { ...operatorPorts(context), mail: mail?.queue },
    {
      email,
      name,
      origin,
      accountPagesPath: config.page.accountPagesPath,
      ttlSeconds,
      actor: cliActor,
    },
  );
  if (issued.outcome === 'taken')
    throw new CliError(
      `a user with email ${email} already exists: nothing was sent (they can sign in, or reset their password)`,
    );
  const until = `${new Date(issued.expiresAt).toISOString()} (${lifetime(ttlSeconds)})`;
  if (mail === undefined) {
    context.out(`invited ${email}: not mailed (--print-link); the link works once, until ${until}`);
  } else if (mail.mode === 'hold') {
    context.out(
      `invited ${email}: the mail is held in the outbox (development without SMTP_URL; \`${cliCommand()} mail show ${issued.mailId ?? ''}\` shows it); the link works once, until ${until}`,
    );
  } else {
    context.out(
      `invited ${email}: the invitation mail is queued (mail ${issued.mailId ?? ''}) for the running service to send; the link works once, until ${until}`,
    );
  }
  if (issued.voided > 0)
    context.out(
      `${issued.voided} earlier invitation${issued.voided === 1 ? '' : 's'} of ${email} no longer work${issued.voided === 1 ? 's' : ''}`,
    );
  if (printLink) {
    context.out('pass this link on yourself, by a channel you trust; it is shown only now:');
    context.out(issued.link);
  }
}
