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
  /** A sign-in's device (`signin` only): the account's record of devices keeps it. */
  device?: SignInDevice;
}

/** The device a sign-in came from (src/auth/cookies/device-cookie.ts), and where links point. */
export interface SignInDevice {
  /** Its id, kept across the device cookie's re-issues. */
  id: string;
  /** The device cookie it brought verified for this account: it signed in to it here before. */
  cookieVerified: boolean;
  /** The public origin a mail about the sign-in builds its links on (AUTH_URL's, else the request's). */
  origin: string;
}

export interface AccountEventSink {
  /** Fire and forget: failures are logged, never answered. */
  note(event: PendingAccountEvent, client: { ip: string; device: string }): void;
}
