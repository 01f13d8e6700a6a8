// An outbox that keeps every mail it is given, for suites that build the app in-process and
// read what it mails (a sign-in enrolment's code, a notice) without an SMTP server.
import type { MailKind, MailQueue, MailRequest } from '../../src/mail/mail-queue.js';

export function capturedMail() {
  const mails: MailRequest[] = [];
  const queue: MailQueue = {
    enabled: true,
    enqueue: (_db, request) => {
      mails.push(request);
      return Promise.resolve();
    },
  };
  const to = (email: string, kind?: MailKind) =>
    mails.filter((mail) => mail.to === email && (kind === undefined || mail.kind === kind));
  return {
    mails,
    queue,
    /** Every mail to `email` (of `kind`), oldest first. */
    to,
    /** The code of the newest sign-in enrolment mail to `email` (throws when there is none). */
    enrolmentCode(email: string): string {
      const code = to(email, 'signin-enrolment-code').at(-1)?.values.code;
      if (code === undefined) throw new Error(`no enrolment code was mailed to ${email}`);
      return code;
    },
  };
}
