import type { Transporter } from 'nodemailer';
import { isMailboxAddress } from './address.js';

/** One mail as the transport sends it. */
export interface OutgoingMail {
  id: string;
  to: string;
  subject: string;
  text: string;
  html: string;
}

/**
 * What an attempt came to. `permanent`: the server refused this mail for good (a 5xx to the
 * recipient or the message); retrying the same mail cannot help. Anything else may pass later.
 */
export type SendResult = { ok: true } | { ok: false; permanent: boolean; error: string };

export interface MailTransport {
  /**
   * Settles within the timeouts below (each bounds one wait: a server dripping bytes can outlast
   * them; the worker renews the mail's lease for as long as it takes), or when `close` cuts it.
   */
  send(mail: OutgoingMail): Promise<SendResult>;
  /** Closes the idle connections; a busy one closes when its attempt ends (or the process exits). */
  close(): void;
  /**
   * Connects and logs in on a connection of its own, sends nothing: what start-up checks (off
   * its path). Within the timeouts below; `error` says what failed and what to change.
   */
  verify(): Promise<{ ok: true } | { ok: false; error: string }>;
}

export interface SmtpTimeouts {
  /** To open the TCP (and TLS) connection. */
  connectionMs: number;
  /** From connecting to the server's greeting. */
  greetingMs: number;
  /**
   * Silence on an open connection: what ends an attempt to a server that stalls mid-way. It
   * covers the wait for the answer to the message's final dot, which RFC 5321 4.5.3.2.6 gives
   * 10 minutes: a relay that checks the message (spam, virus) before it answers may take that
   * long, and an attempt given up sooner is retried, so the relay gets the mail twice.
   */
  socketMs: number;
}

/**
 * RFC 5321 4.5.3.2: 5 minutes for the greeting, 10 minutes for the answer to the end of the
 * data (every other command has 5 or less, within it). No value is given for the TCP connect:
 * 30 s, nodemailer's is 2 minutes. A timeout before the data is sent cannot deliver twice.
 */
export const defaultSmtpTimeouts: SmtpTimeouts = {
  connectionMs: 30_000,
  greetingMs: 5 * 60_000,
  socketMs: 10 * 60_000,
};

const errorMaxLength = 300;

/** Connections the pooled transport keeps open; the worker sends this many mails at a time. */
export const smtpConnections = 2;

interface NodemailerError {
  code?: string;
  responseCode?: number;
  response?: string;
  message?: string;
}

/**
 * The server's answer in a few words, for `last_error` and the log. It never holds the SMTP
 * password: nodemailer's messages quote the server and the address, not the credentials.
 */
function describe(error: NodemailerError): string {
  const detail = (error.response ?? error.message ?? 'unknown error').replace(/\s+/g, ' ').trim();
  // What to change comes first: the server's words may be long and are cut.
  const hint =
    error.code === 'ETLS'
      ? 'STARTTLS failed and SMTP_URL requires it (smtp:// with credentials to a host off this machine; use smtps://, or ?requireTLS=false to allow clear text): '
      : '';
  return `${error.code ?? 'ERROR'}: ${hint}${detail}`.slice(0, errorMaxLength);
}

/**
 * What a failed connection-and-login check says: what failed, in words, then the server's
 * answer. Never the password (nodemailer's messages quote the server, not the credentials).
 */
function describeCheck(error: NodemailerError, host: string, port: number): string {
  const code = error.code ?? '';
  const dnsCode = (error as { errno?: unknown }).errno;
  const what =
    code === 'EAUTH'
      ? `the server refused the login${error.responseCode === undefined ? '' : ` (${error.responseCode})`}: check the user and password in SMTP_URL`
      : code === 'EDNS' ||
          dnsCode === 'ENOTFOUND' ||
          /ENOTFOUND|EAI_AGAIN/.test(error.message ?? '')
        ? `unknown host ${host}: check the host in SMTP_URL`
        : code === 'ETIMEDOUT' || code === 'ECONNECTION' || code === 'ESOCKET'
          ? `could not talk to ${host}:${port}: check the host, the port and the TLS mode in SMTP_URL`
          : 'check SMTP_URL';
  return `${what}; ${describe(error)}`;
}

/**
 * A 5xx to the envelope (the recipient) or the message is final (RFC 5321 4.2.1): the same
 * mail will be refused again. A 5xx to our login (EAUTH) is not: the operator can fix the
 * credentials, so it is retried with the rest; so is every 4xx and every network failure.
 */
export function isPermanent(error: NodemailerError): boolean {
  if (error.code !== 'EENVELOPE' && error.code !== 'EMESSAGE') return false;
  return (
    error.responseCode === undefined || (error.responseCode >= 500 && error.responseCode < 600)
  );
}

/** The host names a connection to which never leaves the machine. */
export function isLoopbackHost(host: string): boolean {
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) ||
    host === '::1' ||
    /^::ffff:127\./i.test(host)
  );
}

/**
 * nodemailer's options from SMTP_URL, read with WHATWG URL (nodemailer's own reading uses the
 * deprecated `url.parse`, which warns on stderr): `smtps:` is TLS from the start, `smtp:`
 * upgrades with STARTTLS; user and password are percent-decoded. Query parameters become
 * options as nodemailer reads them (`?requireTLS=true`, `?tls.rejectUnauthorized=false`).
 * `smtp:` with credentials to a host off this machine requires STARTTLS (`requireTLS`): a relay
 * (or anyone between) that offers no STARTTLS would otherwise get the password and every reset
 * link in clear text. `?requireTLS=false` is the operator saying otherwise.
 */
export function smtpOptionsOf(smtpUrl: string): Record<string, unknown> {
  const url = new URL(smtpUrl);
  const options: Record<string, unknown> = {
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    secure: url.protocol === 'smtps:',
    ...(url.port !== '' && { port: Number(url.port) }),
    ...(url.username !== '' && {
      auth: { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) },
    }),
  };
  for (const [key, raw] of url.searchParams) {
    const value =
      raw === 'true'
        ? true
        : raw === 'false'
          ? false
          : raw !== '' && !Number.isNaN(Number(raw))
            ? Number(raw)
            : raw;
    const path = key.split('.');
    let target = options;
    for (const part of path.slice(0, -1)) {
      const next = target[part];
      target = (target[part] = typeof next === 'object' && next !== null ? next : {}) as Record<
        string,
        unknown
      >;
    }
    target[path.at(-1) as string] = value;
  }
  if (
    url.protocol === 'smtp:' &&
    options.auth !== undefined &&
    options.requireTLS === undefined &&
    !isLoopbackHost(options.host as string)
  )
    options.requireTLS = true;
  return options;
}

/** What start-up says about the transport: where it connects, how, and as whom. Never the password. */
export interface SmtpDescription {
  host: string;
  port: number;
  /** `tls` (smtps://), `starttls required`, `starttls when offered`, or `none` (?ignoreTLS=true). */
  tls: 'tls' | 'starttls required' | 'starttls when offered' | 'none';
  /** The login's user; absent without credentials. */
  user?: string;
}

export function describeSmtp(smtpUrl: string): SmtpDescription {
  const options = smtpOptionsOf(smtpUrl);
  const secure = options.secure === true;
  // nodemailer's defaults (smtp-connection): 465 for TLS from the start, else 587.
  const port = typeof options.port === 'number' ? options.port : secure ? 465 : 587;
  const tls = secure
    ? 'tls'
    : options.requireTLS === true
      ? 'starttls required'
      : options.ignoreTLS === true
        ? 'none'
        : 'starttls when offered';
  const auth = options.auth as { user: string } | undefined;
  return {
    host: options.host as string,
    port,
    tls,
    ...(auth !== undefined && { user: auth.user }),
  };
}

/** The bare address of MAIL_FROM (`Name <box@example.com>` or `box@example.com`). */
function addressOf(from: string): string {
  return /<([^>]+)>\s*$/.exec(from)?.[1] ?? from;
}

/** The domain of the sender's address, for Message-IDs. */
function domainOf(from: string): string {
  const address = addressOf(from);
  return address.slice(address.lastIndexOf('@') + 1) || 'gatehouse.invalid';
}

/**
 * A pooled nodemailer SMTP transport over `smtpUrl` (credentials in the URL). Each mail's
 * Message-ID is derived from its outbox id, so a mail sent again after a crash (SMTP accepted
 * it, the process died before recording that) carries the same Message-ID.
 */
export async function createSmtpTransport(
  smtpUrl: string,
  from: string,
  timeouts: SmtpTimeouts = defaultSmtpTimeouts,
): Promise<MailTransport> {
  // Loaded only when mail is configured.
  const { default: nodemailer } = await import('nodemailer');
  const transporter: Transporter = nodemailer.createTransport({
    ...smtpOptionsOf(smtpUrl),
    pool: true,
    maxConnections: smtpConnections,
    // A connection that drops mid-send fails the mail here, and the outbox schedules the retry:
    // nodemailer's own requeue (unbounded by default) would resend it behind the outbox's back,
    // twice over once the outbox retried too.
    maxRequeues: 0,
    connectionTimeout: timeouts.connectionMs,
    greetingTimeout: timeouts.greetingMs,
    socketTimeout: timeouts.socketMs,
    // Nothing is attached: refuse any file or URL a body might name.
    disableFileAccess: true,
    disableUrlAccess: true,
  } as Parameters<typeof nodemailer.createTransport>[0]);
  const domain = domainOf(from);
  const fromAddress = addressOf(from);
  return {
    send: (mail) => {
      // The stored address goes out as it is, or not at all. A string would be parsed again by
      // nodemailer's address parser, which finds a mailbox inside `owner<test@example.com>` and
      // delivers there; an object `{ name, address }` is taken as it is, in the To header and in
      // the envelope (RCPT TO), which is set explicitly rather than derived from headers.
      if (!isMailboxAddress(mail.to))
        return Promise.resolve<SendResult>({
          ok: false,
          permanent: true,
          error: 'ERECIPIENT: the stored recipient is not one bare address; not sent',
        });
      const to = { name: '', address: mail.to };
      return transporter
        .sendMail({
          from,
          to: [to],
          // nodemailer reads objects here too (MimeNode.setEnvelope); its types say strings only.
          envelope: { from: fromAddress, to: [to] } as unknown as { from: string; to: string },
          subject: mail.subject,
          text: mail.text,
          html: mail.html,
          messageId: `<${mail.id}@${domain}>`,
        })
        .then(
          (): SendResult => ({ ok: true }),
          (error: NodemailerError): SendResult => ({
            ok: false,
            permanent: isPermanent(error),
            error: describe(error),
          }),
        );
    },
    close: () => transporter.close(),
    verify: () => {
      const { host, port } = describeSmtp(smtpUrl);
      return transporter.verify().then(
        () => ({ ok: true }) as const,
        (error: NodemailerError) =>
          ({ ok: false, error: describeCheck(error, host, port) }) as const,
      );
    },
  };
}
