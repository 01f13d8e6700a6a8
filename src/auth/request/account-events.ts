/**
 * What sign-in and sign-out tell the account's record (src/account/event-sink.ts implements
 * it): noted once the answer has gone out, so the record costs the answer nothing and no
 * answer's timing depends on whether the account exists.
 */
export interface PendingAccountEvent {
  type: 'signin' | 'signin_failed' | 'throttled' | 'signout' | 'session_migrated';
  /** The account, when the request already knows it. */
  userId?: string;
  /** Else the normalised address typed: recorded only if an account has it. */
  email?: string;
  detail?: Record<string, unknown>;
}

export interface AccountEventSink {
  /** Fire and forget: failures are logged, never answered. */
  note(event: PendingAccountEvent, client: { ip: string; device: string }): void;
}
