import net from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/**
 * How the loopback SMTP server behaves: `up` accepts every mail; `down` is closed (connection
 * refused); `stalled` accepts the connection and never says a word; `4xx`/`5xx` refuse the
 * recipient with 451 (try later) or 550 (no such mailbox); `slow` accepts, but answers the
 * message's end only after `slowMs`.
 */
export type SmtpMode = 'up' | 'slow' | 'down' | 'stalled' | '4xx' | '5xx';

export interface ReceivedMail {
  envelopeTo: string[];
  parsed: ParsedMail;
  raw: string;
}

export const smtpUser = 'gatehouse';
export const smtpPassword = 'p@ss:word/with?odd#chars';

/**
 * A real SMTP server on 127.0.0.1 (the `smtp-server` package) in the test process, on one port
 * across mode changes, checking the credentials in the URL. Every delivered mail is parsed
 * with `mailparser`.
 */
export class LoopbackSmtp {
  readonly received: ReceivedMail[] = [];
  /** Logins tried (AUTH commands), right or wrong: each one sent the password. */
  logins = 0;
  mode: SmtpMode = 'down';
  slowMs = 1_500;
  #server: SMTPServer | net.Server | undefined;
  #sockets = new Set<net.Socket>();
  private constructor(
    readonly port: number,
    readonly host: string,
  ) {}

  /** A server on a free port, in `mode`, on 127.0.0.1 unless `host` names another address of this machine. */
  static async start(mode: SmtpMode = 'up', host = '127.0.0.1'): Promise<LoopbackSmtp> {
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, host, resolve));
    const port = (probe.address() as net.AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const smtp = new LoopbackSmtp(port, host);
    await smtp.setMode(mode);
    return smtp;
  }

  /** `smtp://user:password@127.0.0.1:port`, the password percent-encoded. */
  get url(): string {
    const host = this.host.includes(':') ? `[${this.host}]` : this.host;
    return `smtp://${smtpUser}:${encodeURIComponent(smtpPassword)}@${host}:${this.port}`;
  }

  async setMode(mode: SmtpMode): Promise<void> {
    await this.#close();
    this.mode = mode;
    if (mode === 'down') return;
    const server = mode === 'stalled' ? this.#silent() : this.#smtp(mode);
    server.on('connection', (socket: net.Socket) => {
      this.#sockets.add(socket);
      socket.once('close', () => this.#sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, this.host, () => resolve());
    });
    this.#server = server;
  }

  /** Waits until `count` mails have arrived (or throws after `timeoutMs`). */
  async waitFor(count: number, timeoutMs = 10_000): Promise<ReceivedMail[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.received.length < count) {
      if (Date.now() > deadline)
        throw new Error(`expected ${count} mails, got ${this.received.length} in ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return this.received;
  }

  /**
   * The first mail to `address` (whose subject matches, if given) among those after the first
   * `since`, waiting for it.
   */
  async mailTo(
    address: string,
    since = 0,
    subject?: RegExp,
    timeoutMs = 15_000,
  ): Promise<ReceivedMail> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const mail = this.received
        .slice(since)
        .find(
          (m) =>
            m.envelopeTo.includes(address) &&
            (subject === undefined || subject.test(m.parsed.subject ?? '')),
        );
      if (mail !== undefined) return mail;
      if (Date.now() > deadline)
        throw new Error(`no mail to ${address} matching ${String(subject)} in ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  close(): Promise<void> {
    return this.#close();
  }

  #silent(): net.Server {
    // Accepts and holds the connection: no greeting, no answer, ever.
    return net.createServer(() => undefined);
  }

  #smtp(mode: 'up' | 'slow' | '4xx' | '5xx'): SMTPServer {
    const server = new SMTPServer({
      // Loopback without TLS: the credentials still travel (and are checked).
      disabledCommands: ['STARTTLS'],
      allowInsecureAuth: true,
      logger: false,
      // Going down ends open connections (a client's pooled one too) at once, as a crash would.
      closeTimeout: 10,
      onAuth: (auth, _session, callback) => {
        this.logins += 1;
        if (auth.username === smtpUser && auth.password === smtpPassword)
          return callback(null, { user: auth.username });
        return callback(Object.assign(new Error('bad credentials'), { responseCode: 535 }));
      },
      onRcptTo(_address, _session, callback) {
        if (mode === '4xx')
          return callback(
            Object.assign(new Error('mailbox busy, try again later'), { responseCode: 451 }),
          );
        if (mode === '5xx')
          return callback(Object.assign(new Error('no such mailbox'), { responseCode: 550 }));
        return callback();
      },
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          simpleParser(raw).then(
            (parsed) => {
              this.received.push({
                envelopeTo: session.envelope.rcptTo.map((to) => to.address),
                parsed,
                raw,
              });
              if (mode === 'slow') setTimeout(() => callback(), this.slowMs);
              else callback();
            },
            (error: Error) => callback(error),
          );
        });
      },
    });
    server.on('error', () => undefined);
    return server;
  }

  async #close(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    if (server === undefined) return;
    for (const socket of this.#sockets) socket.destroy();
    this.#sockets.clear();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
