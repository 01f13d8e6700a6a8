import type { MailKind } from './mail-queue.js';

/**
 * Which mail the worker sends first when several are due (issue 25): lower goes first. A reset
 * and the security notices are what a person is waiting for, and a reset link expires in the
 * queue: sign-ups from a few dozen addresses to fresh mailboxes must not hold them behind a relay
 * that takes a few mails a second. Sign-up, address-change, verification and invitation mail
 * waits behind them. `test` is the operator's `mail test`, which waits for its delivery.
 * Migration 008 sets the same for mail queued before it.
 */
export const mailPriority: Readonly<Record<MailKind, 0 | 1>> = {
  'password-reset': 0,
  'password-changed-notice': 0,
  'email-changed-notice': 0,
  'account-locked-notice': 0,
  'second-factor-notice': 0,
  'passkey-added-notice': 0,
  'passkey-removed-notice': 0,
  // Its code lives five minutes, as the sign-in waiting for it does.
  'signin-enrolment-code': 0,
  test: 0,
  'signup-confirmation': 1,
  'account-exists': 1,
  'email-verification': 1,
  'email-change': 1,
  invitation: 1,
};
