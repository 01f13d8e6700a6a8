/** What a webhook can say happened (the accounts spec's "Webhooks"). */
export const webhookTypes = [
  'user.created',
  'user.updated',
  'user.deleted',
  'user.disabled',
  'user.enabled',
  'email.verified',
  'email.changed',
  'password.changed',
  'session.created',
  'session.revoked',
  'second_factor.added',
  'second_factor.removed',
  'account.locked',
] as const;

export type WebhookType = (typeof webhookTypes)[number];

/**
 * A webhook's `data`: the user as the application keeps it, and what the event is about. Never
 * a password, hash, token, code or cookie: a session is named by its public id (the one the
 * user's sessions list shows), which no request accepts as a credential.
 */
export interface WebhookData {
  id: string;
  email: string;
  name: string;
  emailVerified: boolean;
  disabled: boolean;
  /** session.created, and session.revoked of one session. */
  session?: string;
  /** session.revoked of several at once (a disable, a password change): how many ended. */
  sessions?: number;
  /** second_factor.*: which kind (`totp`, `passkey`). */
  factor?: 'totp' | 'passkey';
  /** second_factor.* of a passkey: its id, as the account's passkey list shows it. */
  passkey?: string;
  /**
   * second_factor.added of TOTP that took the place of the one on before (a new app): the
   * account had TOTP throughout, so no `second_factor.removed` is sent for the old one.
   */
  replaced?: true;
  /** user.updated of an identity linked or unlinked (src/account/identities/). */
  identity?: { id: string; provider: string; change: 'linked' | 'unlinked' };
}
