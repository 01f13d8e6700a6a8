import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import {
  createDeliveryWorker,
  type DeliveryEvents,
  type DeliveryLog,
  type DeliverySettings,
  type DeliveryWorker,
} from './mail-worker.js';
import { createMailQueue, type HeldMail, type MailMode, type OutboxQueue } from './outbox-queue.js';
import { createOutboxStore, type OutboxStore } from './mail-outbox-store.js';
import { createSmtpTransport, describeSmtp, type SmtpTimeouts } from './smtp-transport.js';
import type { MailCatalogue } from './catalogue.js';
import { createMailRenderer, type TemplateOverrides } from './templates.js';

/** What mail needs from the configuration (src/config/mail.ts, pages.ts, auth.ts). */
export interface MailSettings {
  production: boolean;
  smtpUrl: string | undefined;
  from: string | undefined;
  productName: string;
  /** SUPPORT_CONTACT: who to ask for help (an https:// URL or an address); undefined: none. */
  supportContact?: string | undefined;
  /** The public origin (AUTH_URL), shown in every mail; undefined: none shown. */
  origin: string | undefined;
  templates: TemplateOverrides;
  /** Every kind of mail the service sends, with its words (`registeredMails`). */
  mails: MailCatalogue;
  retryBaseSeconds: number;
  /** Attempts this process may start per minute (MAIL_RATE_PER_MINUTE, shared by WORKERS). */
  ratePerMinute: number;
}

export interface Mail {
  mode: MailMode;
  queue: OutboxQueue;
  worker: DeliveryWorker;
  store: OutboxStore;
  /** Connects and logs in once, sending nothing; undefined when there is no transport. */
  verify: (() => Promise<{ ok: true } | { ok: false; error: string }>) | undefined;
}

/**
 * Production mails links only on AUTH_URL: without it (AUTH_TRUST_HOST=true) a link would be
 * built on the request's Host header, which a client can choose, and a reset link mailed to
 * someone else's inbox would lead to the chooser's host with the token in it.
 */
export function mailModeOf(
  settings: Pick<MailSettings, 'production' | 'smtpUrl' | 'origin'>,
): MailMode {
  if (settings.production && settings.origin === undefined) return 'off';
  if (settings.smtpUrl !== undefined) return 'send';
  return settings.production ? 'off' : 'hold';
}

/**
 * The one sentence start-up says about mail when it is not sent, or undefined when it is. `cli`:
 * how the operator runs the CLI here (src/boot/cli-command.ts), so the hint runs as printed.
 */
export function mailStartupNote(
  mode: MailMode,
  settings: Pick<MailSettings, 'smtpUrl'>,
  cli: string,
): string | undefined {
  if (mode === 'off' && settings.smtpUrl !== undefined)
    return `mail is off: production without AUTH_URL would build mailed links on a request's Host header, which a client chooses; set AUTH_URL to the public origin (e.g. AUTH_URL=https://auth.example.com) to send mail. Password reset, verification and sign-up answer 404 until then, and invitations are only printed (${cli} users invite --print-link)`;
  if (mode === 'off')
    return `mail is off: set SMTP_URL (and MAIL_FROM) to send mail; password reset, verification and sign-up answer 404 until then, and invitations are only printed (${cli} users invite --print-link)`;
  if (mode === 'hold')
    return `mail is held in the outbox (development without SMTP_URL): links and codes are logged, and \`${cli} mail show ID\` shows each mail`;
  return undefined;
}

/** The warn line a held mail gets in development: what a developer needs to go on. */
export function logHeldMail(log: DeliveryLog, mail: HeldMail): void {
  log.warn(
    {
      mail: mail.id,
      kind: mail.kind,
      to: mail.to,
      link: mail.link,
      code: mail.code,
      lockLink: mail.lockLink,
    },
    'development: mail held, not sent (no SMTP_URL); its link and code are shown here only because this is development',
  );
}

/**
 * The outbox, its queue and its worker over `db`. The worker is not started: the service starts
 * it once it listens, the CLI only for `mail test`.
 */
export async function createMail(
  db: Kysely<Database>,
  dialect: 'sqlite' | 'postgres',
  settings: MailSettings,
  hooks: {
    log: DeliveryLog;
    events: DeliveryEvents;
    delivery?: Partial<DeliverySettings>;
    timeouts?: SmtpTimeouts;
    /** The clock (ms), injected in tests. */
    now?: () => number;
    /** false: no SMTP transport (the CLI queues and reads; the service delivers). */
    deliver?: boolean;
  },
): Promise<Mail> {
  const mode = mailModeOf(settings);
  const store = createOutboxStore(db, dialect);
  const transport =
    mode === 'send' &&
    hooks.deliver !== false &&
    settings.smtpUrl !== undefined &&
    settings.from !== undefined
      ? await createSmtpTransport(settings.smtpUrl, settings.from, hooks.timeouts)
      : undefined;
  const worker = createDeliveryWorker({
    store,
    transport,
    // Names this process in `mail show` (lease holder) without naming anything secret.
    holder: `${os.hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`,
    settings: {
      retryBaseMs: settings.retryBaseSeconds * 1000,
      rateLimit: { count: settings.ratePerMinute, windowMs: 60_000 },
      ...hooks.delivery,
    },
    log: hooks.log,
    events: hooks.events,
    ...(hooks.now !== undefined && { now: hooks.now }),
  });
  const queue = createMailQueue({
    mode,
    store,
    renderer: createMailRenderer(
      {
        productName: settings.productName,
        origin: settings.origin,
        supportContact: settings.supportContact,
      },
      settings.templates,
      settings.mails,
    ),
    ...(hooks.now !== undefined && { now: hooks.now }),
    onQueued: () => worker.wake(),
    onHeld: (mail) => logHeldMail(hooks.log, mail),
  });
  return { mode, queue, worker, store, verify: transport?.verify };
}

/**
 * Why production must not start: SIGNUP=open promises sign-ups that mail off would answer 404
 * (a sign-up form that never works) while the operator believes sign-up is open; EMAIL_SIGNIN=on
 * promises a sign-in that only a mail can complete. One line, naming the variables; undefined
 * when the start may go on.
 */
export function mailStartRefusal(
  settings: Pick<MailSettings, 'production' | 'smtpUrl' | 'origin'>,
  wants: { signupOpen: boolean; emailSignIn: boolean },
): string | undefined {
  if (!settings.production) return undefined;
  if (wants.signupOpen && settings.smtpUrl === undefined)
    return 'SIGNUP=open needs mail, and SMTP_URL is not set: a sign-up is confirmed by a mailed link. Set SMTP_URL (and MAIL_FROM), e.g. SMTP_URL=smtps://user:password@smtp.example.com:465, or leave SIGNUP=closed';
  if (!wants.emailSignIn || mailModeOf(settings) !== 'off') return undefined;
  return settings.smtpUrl === undefined
    ? 'EMAIL_SIGNIN=on needs mail, and SMTP_URL is not set: its link and code come by mail. Set SMTP_URL (and MAIL_FROM), e.g. SMTP_URL=smtps://user:password@smtp.example.com:465, or set EMAIL_SIGNIN=off'
    : 'EMAIL_SIGNIN=on needs mail, and production mails links only on AUTH_URL, which is not set. Set AUTH_URL to the public origin, e.g. AUTH_URL=https://auth.example.com, or set EMAIL_SIGNIN=off';
}

/** The start-up line about the transport in `send` mode: where, how and as whom, never the password. */
export function mailTransportLine(
  settings: Pick<MailSettings, 'smtpUrl' | 'from'>,
): { fields: object; message: string } | undefined {
  if (settings.smtpUrl === undefined) return undefined;
  const smtp = describeSmtp(settings.smtpUrl);
  const login = smtp.user === undefined ? 'without a login' : `as ${smtp.user}`;
  return {
    fields: { smtp, from: settings.from },
    message: `mail goes through ${smtp.host}:${smtp.port} (TLS: ${smtp.tls}) ${login}, from ${settings.from ?? 'MAIL_FROM'}`,
  };
}

/**
 * The connection-and-login check at start: run after the service listens and never awaited by
 * the start, so a slow or wrong SMTP server delays and stops nothing. A failure is a warning
 * naming SMTP_URL and what failed (a refused login, an unknown host): mail is kept in the
 * outbox and retried meanwhile, and the operator can fix the setting within the hour.
 */
export function checkSmtpAtStart(mail: Pick<Mail, 'verify'>, log: DeliveryLog): void {
  const verify = mail.verify;
  if (verify === undefined) return;
  verify().then(
    (result) => {
      if (result.ok) log.info({ setting: 'SMTP_URL' }, 'mail: SMTP connection and login checked');
      else
        log.warn(
          { setting: 'SMTP_URL', error: result.error },
          `mail: the SMTP check at start failed (SMTP_URL): ${result.error}. Mail stays in the outbox and is retried`,
        );
    },
    (error: unknown) =>
      log.warn(
        { setting: 'SMTP_URL', err: error },
        'mail: the SMTP check at start failed (SMTP_URL)',
      ),
  );
}

/** The mail settings out of the parsed configuration (its shape only: mail/ does not import config/). */
export function mailSettingsOf(config: {
  env: string;
  workers: number;
  authUrl: string | undefined;
  page: { productName: string; supportContact?: string | undefined };
  mail: Pick<
    MailSettings,
    'smtpUrl' | 'from' | 'templates' | 'mails' | 'retryBaseSeconds' | 'ratePerMinute'
  >;
}): MailSettings {
  return {
    ...config.mail,
    // MAIL_RATE_PER_MINUTE is the instance's: each of its WORKERS processes sends its share
    // (never none, so a cap below the worker count sends at most one a minute per process).
    ratePerMinute: Math.max(1, Math.floor(config.mail.ratePerMinute / Math.max(1, config.workers))),
    production: config.env === 'production',
    productName: config.page.productName,
    supportContact: config.page.supportContact,
    origin: config.authUrl,
  };
}
