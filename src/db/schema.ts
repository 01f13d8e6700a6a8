import type { Generated } from 'kysely';

/** Times are milliseconds since the epoch in every table, so both backends compare them alike. */
export interface UsersTable {
  id: string;
  email: string;
  name: string;
  password_hash: string;
  disabled: Generated<number>;
  /** Moved on by every credential change; a session is issued only for the current one. */
  credential_version: Generated<number>;
  /** When the user proved they read mail at `email`; null until then (migration 004). */
  email_verified_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface SessionsTable {
  id: string;
  user_id: string;
  created_at: number;
  revoked_at: number | null;
  /** The last re-authentication; null: the sign-in (`created_at`) is the last proof. */
  authenticated_at: number | null;
  /** How the sign-in was proved, space-separated (`password`, …; migration 009). */
  proofs: Generated<string>;
}

export interface SigninThrottleTable {
  key: string;
  failures: number;
  window_started_at: number;
  locked_until: number;
}

export type AccountTokenPurpose =
  'reset' | 'verify' | 'email_change' | 'invite' | 'lock' | 'signup';

/** An e-mailed secret, kept only as hashes (src/account/model/secrets.ts). */
export interface AccountTokensTable {
  id: string;
  user_id: string | null;
  purpose: AccountTokenPurpose;
  token_hash: string;
  code_hash: string | null;
  code_tries_left: number;
  credential_version: number | null;
  email: string;
  new_email: string | null;
  /** The name for the account an invitation or a sign-up creates (migration 005); else null. */
  name: string | null;
  /** A sign-up's argon2 hash of the password chosen (migration 006); null otherwise. */
  password_hash: string | null;
  expires_at: number;
  used_at: number | null;
  created_at: number;
}

/** What happened to an account, when, from where (src/account/model/events.ts). */
export interface AccountEventsTable {
  id: string;
  user_id: string;
  type: string;
  at: number;
  ip: string;
  device: string;
  /** JSON, or null. */
  detail: string | null;
}

/** A mail on its way (src/mail/outbox-store.ts); its bodies are erased once no longer needed. */
export interface MailOutboxTable {
  id: string;
  kind: string;
  recipient: string;
  subject: string;
  body_text: string | null;
  body_html: string | null;
  state: 'held' | 'queued' | 'sending' | 'sent' | 'failed';
  attempts: Generated<number>;
  next_attempt_at: number;
  retry_until: number;
  lease_holder: string | null;
  lease_until: number | null;
  last_error: string | null;
  created_at: number;
  sent_at: number | null;
  expires_at: number | null;
  /** Claimed lowest first (migration 008, src/mail/priority.ts): security mail before the rest. */
  priority: number;
}

/** A registered passkey (migration 012): its public key only, never a secret. */
export interface PasskeysTable {
  id: string;
  user_id: string;
  /** base64url, as an assertion names it. */
  credential_id: string;
  /** The COSE public key, base64url. */
  public_key: string;
  counter: Generated<number>;
  /** Comma-separated hints (`internal`, `hybrid`, …), '' when none. */
  transports: Generated<string>;
  backed_up: Generated<number>;
  name: string;
  created_at: number;
  last_used_at: number | null;
}

/** A WebAuthn challenge once answered, kept until it would have expired anyway. */
export interface PasskeyChallengesUsedTable {
  challenge_hash: string;
  expires_at: number;
}

export interface Database {
  users: UsersTable;
  sessions: SessionsTable;
  signin_throttle: SigninThrottleTable;
  account_events: AccountEventsTable;
  account_tokens: AccountTokensTable;
  mail_outbox: MailOutboxTable;
  passkeys: PasskeysTable;
  passkey_challenges_used: PasskeyChallengesUsedTable;
}
