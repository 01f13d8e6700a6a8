import { setTimeout as sleep } from 'node:timers/promises';
import { cliCommand } from '../../boot/cli-command.js';
import { createMail, mailSettingsOf, mailStartupNote, type Mail } from '../../mail/start.js';
import { outboxStates, type OutboxMail, type OutboxState } from '../../mail/mail-outbox-store.js';
import { listMail, retryMail } from '../../operator/operations.js';
import { cliActor, requireEmail, type CliContext } from '../context.js';
import { CliError } from '../prompt.js';
import { printable } from './list.js';
import { iso, printRows, readListOptions, requireRowId } from './outbox-rows.js';

export const listHelp = `Usage: gatehouse mail list [--state held|queued|sending|sent|failed] [--limit N] [--json]

Lists the outbox, newest first (50 unless --limit says otherwise): id, state, kind, recipient,
created, attempts and the last error. Bodies are not listed: \`mail show ID\`.`;

export const showHelp = `Usage: gatehouse mail show ID

Shows one mail: recipient, subject, state, attempts, times and the last error. In development
it also shows the body while the outbox still holds it (held or queued mail: links and codes
included); in production never, as a body may carry a secret.`;

export const retryHelp = `Usage: gatehouse mail retry ID

Puts a failed mail back in the queue, due now, with a new hour of retries. A mail whose body
was erased (its link expired, or kept 7 days without one) cannot be retried: the user asks again.`;

export const testHelp = `Usage: gatehouse mail test --to ADDRESS [--timeout-seconds N]

Queues a test mail to ADDRESS. With SMTP_URL set it waits (30 s unless told) for a running
service to deliver it and says whether it was delivered: exit 0 delivered, 1 not (yet). In
development without SMTP_URL the mail is held: \`mail show ID\` shows it. In production without
SMTP_URL mail is off and nothing is queued.`;

const noLogs = { info: () => undefined, warn: () => undefined };
const noEvents = { mailSent: () => undefined, mailFailed: () => undefined };

function openMail(context: CliContext): Promise<Mail> {
  return createMail(context.db, context.dialect, mailSettingsOf(context.config), {
    log: noLogs,
    events: noEvents,
    // The running service delivers: the CLI only queues and reads.
    deliver: false,
  });
}

function requireId(raw: string | undefined): string {
  return requireRowId(raw, { short: 'mail', long: 'mail' });
}

async function findMail(mail: Mail, id: string): Promise<OutboxMail> {
  const found = await mail.store.get(id);
  if (found === null) throw new CliError(`no mail with id ${id}`, 1);
  return found;
}

export async function list(
  context: CliContext,
  values: { state?: string; limit?: string; json?: boolean },
) {
  const options = readListOptions<OutboxState>(values, outboxStates);
  const mail = await openMail(context);
  printRows(context, await listMail({ mail: mail.store }, options), {
    json: values.json === true,
    asJson: (m) => ({
      id: m.id,
      state: m.state,
      kind: m.kind,
      to: m.recipient,
      subject: m.subject,
      attempts: m.attempts,
      createdAt: iso(m.createdAt),
      sentAt: m.sentAt === null ? null : iso(m.sentAt),
      lastError: m.lastError,
    }),
    describe: (m) => [m.kind, m.recipient],
    empty: options.state === undefined ? 'the outbox is empty' : `no ${options.state} mail`,
  });
}

export async function show(context: CliContext, values: { id?: string }) {
  const mail = await openMail(context);
  const m = await findMail(mail, requireId(values.id));
  const lines = [
    `id:            ${m.id}`,
    `kind:          ${m.kind}`,
    `to:            ${printable(m.recipient)}`,
    `subject:       ${printable(m.subject)}`,
    `state:         ${m.state}`,
    `attempts:      ${m.attempts}`,
    `created:       ${iso(m.createdAt)}`,
  ];
  if (m.state === 'queued' || m.state === 'sending')
    lines.push(`next attempt:  ${iso(m.nextAttemptAt)}`);
  if (m.state === 'sending') lines.push(`held by:       ${m.leaseHolder ?? '-'}`);
  if (m.sentAt !== null) lines.push(`sent:          ${iso(m.sentAt)}`);
  if (m.expiresAt !== null) lines.push(`expires:       ${iso(m.expiresAt)}`);
  if (m.lastError !== null) lines.push(`last error:    ${printable(m.lastError)}`);
  if (m.bodyText === null) {
    lines.push('body:          erased (sent, failed past use, or expired)');
  } else if (context.config.env === 'production') {
    lines.push('body:          not shown in production (it may carry a secret)');
  } else {
    lines.push('', m.bodyText);
  }
  context.out(lines.join('\n'));
}

export async function retry(context: CliContext, values: { id?: string }) {
  const mail = await openMail(context);
  const id = requireId(values.id);
  const result = await retryMail(
    { now: () => Date.now(), mail: mail.store },
    { id, actor: cliActor },
  );
  switch (result) {
    case 'queued':
      context.out(`queued ${id} again: the service sends it within seconds`);
      return;
    case 'missing':
      throw new CliError(`no mail with id ${id}`, 1);
    case 'erased':
      throw new CliError(
        `mail ${id} cannot be retried: its body was erased (its link expired); the user must ask again`,
        1,
      );
    case 'not-failed': {
      const m = await findMail(mail, id);
      throw new CliError(
        `mail ${id} is ${m.state}, not failed or held: only failed or held mail is retried`,
        1,
      );
    }
  }
}

export async function test(
  context: CliContext,
  values: { to?: string; 'timeout-seconds'?: string },
) {
  const to = requireEmail(values.to, '--to');
  const timeoutSeconds =
    values['timeout-seconds'] === undefined ? 30 : Number(values['timeout-seconds']);
  if (!Number.isFinite(timeoutSeconds) || timeoutSeconds < 0 || timeoutSeconds > 3600)
    throw new CliError('--timeout-seconds must be a number from 0 to 3600', 2);
  const mail = await openMail(context);
  if (mail.mode === 'off')
    throw new CliError(
      `${mailStartupNote(mail.mode, mailSettingsOf(context.config), cliCommand()) ?? 'mail is off'}; nothing was queued`,
      1,
    );
  const id = await mail.queue.enqueueWithId(context.db, { kind: 'test', to, values: {} });
  if (mail.mode === 'hold') {
    context.out(
      `held test mail ${id} for ${to} (development without SMTP_URL): \`${cliCommand()} mail show ${id}\` shows it`,
    );
    return;
  }
  context.out(`queued test mail ${id} for ${to}; waiting up to ${timeoutSeconds} s for delivery`);
  const deadline = Date.now() + timeoutSeconds * 1000;
  for (;;) {
    const m = await findMail(mail, id);
    if (m.state === 'sent') {
      context.out(`delivered: the SMTP server accepted test mail ${id}`);
      return;
    }
    if (m.state === 'failed')
      throw new CliError(`test mail ${id} failed: ${printable(m.lastError ?? 'unknown error')}`, 1);
    if (Date.now() >= deadline) {
      const why =
        m.attempts === 0
          ? 'no instance has tried it yet (is the service running, with this SMTP_URL?)'
          : `last error: ${printable(m.lastError ?? 'none')}; the service retries it until ${iso(m.retryUntil)}`;
      throw new CliError(`test mail ${id} not delivered within ${timeoutSeconds} s: ${why}`, 1);
    }
    await sleep(200);
  }
}
