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
  /** When an import carried the user over from another service; null: made here (migration 020). */
  imported_at: number | null;
  /** Set when all the user's sessions ended: old sessions not yet exchanged end too. */
  legacy_sessions_closed_at: number | null;
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
  /**
   * The id a person's sessions list shows and revokes by: random, no credential (migration
   * 013); null only for rows written without one (none the service writes).
   */
  public_id: string | null;
  /** The sign-in's client address, whole ('' before migration 013); shown truncated. */
  ip: Generated<string>;
  /** The sign-in's User-Agent, cut; shown as a short label (src/sessions/device-label.ts). */
  user_agent: Generated<string>;
  /** When the session was last read, to within a few minutes (src/sessions/last-seen.ts). */
  last_seen_at: number | null;
}

export interface SigninThrottleTable {
  key: string;
  failures: number;
  window_started_at: number;
  locked_until: number;
}

export type AccountTokenPurpose =
  | 'reset'
  | 'verify'
  | 'email_change'
  | 'invite'
  | 'lock'
  | 'signup'
  /** An operator's one-time enrolment code (SECOND_FACTOR=required): no mail, no link. */
  | 'enrolment'
  /** A code mailed to prove an account an identity is offered to (src/account/identities/). */
  | 'identity_link'
  /**
   * A sign-in by e-mail (src/account/email-signin/): its link signs in whoever opens it and
   * presses the button, its code only the browser that asked; userless for a new address when
   * SIGNUP=open (the account is made when it comes back).
   */
  | 'email_signin';

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

/**
 * The columns of a leased outbox (src/outbox/leased-store.ts), the same in the mail and the
 * webhook outbox. `next_attempt_at` is the next try of a queued row, or the end of the lease of a
 * row being sent (held by `lease_holder` until `lease_until`).
 */
export interface LeasedOutboxColumns<State extends string> {
  id: string;
  state: State;
  attempts: Generated<number>;
  next_attempt_at: number;
  retry_until: number;
  lease_holder: string | null;
  lease_until: number | null;
  last_error: string | null;
  created_at: number;
  sent_at: number | null;
}

/** A mail on its way (src/mail/mail-outbox-store.ts); its bodies are erased once no longer needed. */
export interface MailOutboxTable extends LeasedOutboxColumns<
  'held' | 'queued' | 'sending' | 'sent' | 'failed'
> {
  kind: string;
  recipient: string;
  subject: string;
  body_text: string | null;
  body_html: string | null;
  expires_at: number | null;
  /** Claimed lowest first (migration 008, src/mail/priority.ts): security mail before the rest. */
  priority: number;
}

/** One entry of the hash-chained audit log (src/audit/): appended, never updated. */
export interface AuditLogTable {
  /** The chain's order: 1, 2, 3… with no gap but what the retention prune removed. */
  seq: number;
  at: number;
  type: string;
  /** The user the event is about, if any (no foreign key: it outlives the user). */
  user_id: string | null;
  /** Who did it when not the user: an operator's label (`gatehouse CLI`, an admin token's). */
  actor: string | null;
  ip: string;
  device: string;
  /** JSON, or null. */
  detail: string | null;
  prev_hash: string;
  hash: string;
}

/** The audit chain's one head row (id 1): its newest entry and the prune's checkpoint. */
export interface AuditHeadTable {
  id: number;
  seq: number;
  hash: string;
  /** The last entry the retention prune removed (0 and the genesis hash when none). */
  pruned_seq: number;
  pruned_hash: string;
  /** That entry's fields and prev hash as JSON (src/audit/checkpoint.ts); null: none recorded. */
  pruned_entry: string | null;
  /** HMAC of the head and checkpoint under AUDIT_KEY (src/audit/seal.ts); null: not sealed. */
  seal: string | null;
  /** The head's seq when the seal was started (`gatehouse audit seal`); null: not sealed. */
  sealed_since: number | null;
}

/** A webhook on its way to one endpoint (src/webhooks/webhook-outbox-store.ts, migration 014). */
export interface WebhookOutboxTable extends LeasedOutboxColumns<
  'queued' | 'sending' | 'sent' | 'failed'
> {
  /** The `webhook-id`: one per event, the same for every endpoint and every attempt. */
  event_id: string;
  endpoint: string;
  type: string;
  /** The JSON body, `{type, timestamp, data}`, as every attempt sends it. */
  payload: string;
}

/** A person's TOTP (migration 011, src/account/totp/): secrets encrypted, never in clear. */
/** Second-factor failures per account (migration 016; src/account/model/factor-throttle.ts). */
export interface FactorThrottleTable {
  user_id: string;
  failures: number;
  locks: number;
  charges: number;
  lock_charge: number;
  locked_until: number;
  updated_at: number;
}

export interface UserTotpTable {
  user_id: string;
  /** The active secret, encrypted (src/account/totp/secret-box.ts); null: no TOTP. */
  secret: string | null;
  /** A set-up waiting for its confirming code, encrypted; null: none. */
  pending_secret: string | null;
  /** The last time step accepted (-1: none); only ever moved forward. */
  last_step: Generated<number>;
  enabled_at: number | null;
  updated_at: number;
  /** Set when the recovery codes were made at an enrolment during sign-in (migration 015). */
  codes_made_at_signin: number | null;
}

/** A recovery code, kept only as its hash (src/account/totp/recovery-codes.ts). */
export interface RecoveryCodesTable {
  user_id: string;
  code_hash: string;
  used_at: number | null;
  created_at: number;
}

/** A second step waiting for its code (src/challenge/challenge-store.ts). */
export interface SigninChallengesTable {
  token_hash: string;
  user_id: string;
  credential_version: number;
  expires_at: number;
  used_at: number | null;
  /** What it was issued for (migration 015): `second_step`, `enrolment` or `passkey`. */
  purpose: Generated<string>;
  /** An enrolment's mailed code, as a keyed digest (migration 018); null: none was mailed. */
  code_hash: string | null;
  /** Guesses the mailed code has left (migration 018). */
  code_tries_left: Generated<number>;
  /** The proof it stands for (migration 019): `password`, or `identity:<provider>`. */
  first_proof: Generated<string>;
}

/** An identity at a provider linked to an account (migration 019). */
export interface UserIdentitiesTable {
  id: string;
  user_id: string;
  /** The provider's id (`oidc`, `github`, …). */
  provider: string;
  /** Where the subject is unique: the OpenID Connect issuer, or the OAuth service's base URL. */
  issuer: string;
  /** The provider's own name for the person (`sub`, GitHub's numeric id). */
  subject: string;
  /** The address the provider gave when it was linked, if any. */
  email: string | null;
  linked_at: number;
  last_used_at: number | null;
}

/** An unknown identity offered for linking once its browser proves the account (migration 019). */
export interface IdentityLinkOffersTable {
  /** SHA-256 of the offer cookie. */
  token_hash: string;
  user_id: string;
  provider: string;
  issuer: string;
  subject: string;
  email: string | null;
  expires_at: number;
  used_at: number | null;
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

/** An old app's session token exchanged for a Gatehouse session (migration 020). */
export interface LegacySessionsTable {
  /** SHA-256 of the old token, hex. */
  token_hash: string;
  user_id: string;
  session_id: string;
  created_at: number;
  /** When the old token would have expired: the row goes after that. */
  expires_at: number;
}

/** A key session tokens are signed with (migration 021; src/tokens/signing-keys.ts). */
export interface TokenSigningKeysTable {
  /** The JWK thumbprint (RFC 7638) of the public key: the tokens' `kid`. */
  kid: string;
  alg: string;
  public_jwk: string;
  /** The private key (PKCS #8, DER) under AES-256-GCM with a key derived from AUTH_SECRET. */
  private_sealed: string;
  created_at: number;
  /** Signs from then on; published from `created_at`. */
  signs_from: number;
  /** Published until then (its last token has expired); null: no newer key yet. */
  published_until: number | null;
}

/** A personal access token (migration 021; src/users/access-tokens.ts). */
export interface AccessTokensTable {
  id: string;
  user_id: string;
  name: string;
  /** SHA-256 of the whole token, hex. */
  token_hash: string;
  created_at: number;
  expires_at: number | null;
  /** To within a minute. */
  last_used_at: number | null;
  revoked_at: number | null;
}

/** A device or network an account signed in from (migration 022; src/account/new-device/). */
export interface SignInPlacesTable {
  user_id: string;
  kind: 'device' | 'network';
  /** A device: SHA-256 of the user's id and the device's id, base64url. A network: its prefix. */
  key: string;
  first_seen_at: number;
  last_seen_at: number;
}

export interface Database {
  users: UsersTable;
  sessions: SessionsTable;
  signin_throttle: SigninThrottleTable;
  account_events: AccountEventsTable;
  account_tokens: AccountTokensTable;
  mail_outbox: MailOutboxTable;
  audit_log: AuditLogTable;
  audit_head: AuditHeadTable;
  webhook_outbox: WebhookOutboxTable;
  user_totp: UserTotpTable;
  factor_throttle: FactorThrottleTable;
  recovery_codes: RecoveryCodesTable;
  signin_challenges: SigninChallengesTable;
  passkeys: PasskeysTable;
  passkey_challenges_used: PasskeyChallengesUsedTable;
  user_identities: UserIdentitiesTable;
  legacy_sessions: LegacySessionsTable;
  identity_link_offers: IdentityLinkOffersTable;
  token_signing_keys: TokenSigningKeysTable;
  access_tokens: AccessTokensTable;
  sign_in_places: SignInPlacesTable;
}
