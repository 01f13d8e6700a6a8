// `npm run mail-catcher`: a mail catcher for development that needs nothing but this checkout's
// install (the tests' own SMTP server and parser, `smtp-server` and `mailparser`): it listens on
// 127.0.0.1 (port 1025, or MAIL_CATCHER_PORT), takes every mail without a password, and prints
// each one to the terminal, its links whole, so a mailed link or code can be opened from there.
// Point Gatehouse at it: SMTP_URL=smtp://127.0.0.1:1025 MAIL_FROM='My app <no-reply@example.com>'.
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

const port = Number(process.env.MAIL_CATCHER_PORT ?? 1025);
if (!Number.isInteger(port) || port < 1 || port > 65535) {
  process.stderr.write('mail-catcher: MAIL_CATCHER_PORT must be a port number, e.g. 1025\n');
  process.exit(2);
}

const server = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS'],
  // Loopback only: nothing else can send to it.
  onConnect(session, done) {
    const from = session.remoteAddress;
    done(
      from === '127.0.0.1' || from === '::1' || from === '::ffff:127.0.0.1'
        ? null
        : new Error('loopback only'),
    );
  },
  onData(stream, _session, done) {
    simpleParser(stream)
      .then((mail) => {
        const to = [mail.to]
          .flat()
          .map((address) => address?.text ?? '')
          .join(', ');
        const line = '─'.repeat(72);
        process.stdout.write(
          `${line}\n${new Date().toISOString()}\nFrom:    ${mail.from?.text ?? ''}\nTo:      ${to}\nSubject: ${mail.subject ?? ''}\n\n${(mail.text ?? '').trim()}\n${line}\n`,
        );
        done();
      })
      .catch((error: unknown) => done(error as Error));
  },
});

server.on('error', (error) => process.stderr.write(`mail-catcher: ${error.message}\n`));
server.listen(port, '127.0.0.1', () => {
  process.stdout.write(
    `mail-catcher: listening on 127.0.0.1:${port}; give Gatehouse SMTP_URL=smtp://127.0.0.1:${port} and a MAIL_FROM. Ctrl-C stops it.\n`,
  );
});
process.on('SIGINT', () => server.close(() => process.exit(0)));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
