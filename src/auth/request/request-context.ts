import type { VerifiedCredential } from '../../sessions/session-store.js';
import type { PendingAccountEvent } from './account-events.js';

/** Why a request that went through Auth.js must be answered by us instead. */
export type Interruption =
  | {
      kind: 'throttled';
      retryAfterSeconds: number;
      /** A check after a right password was paused (a second factor's lock), not the password. */
      afterPassword?: true;
    }
  | { kind: 'overloaded' }
  | { kind: 'unavailable'; error: unknown }
  | { kind: 'internal'; error: unknown };

/**
 * What Auth.js cannot carry between our route and our callbacks (it hands `authorize()` a
 * rebuilt Request, and the jwt callback none): the route builds the request's Auth.js
 * configuration around it, so every callback sees its own request's context. Not
 * AsyncLocalStorage: on Node 20 its first use turns on async hooks for every promise and
 * socket in the process, a cost every request then pays (health about 6 % in wrk runs).
 */
export interface AuthRequestContext {
  clientIp: string;
  /**
   * The request's User-Agent ('' when none): a new session keeps it for its owner's list, and
   * what a check after the password records names the device by it.
   */
  userAgent?: string;
  /** The public origin mailed links are built on (AUTH_URL's, else the request's). */
  origin: string;
  /** The session token the client held when it signed in again (fixation: it is revoked). */
  previousSessionToken: string | undefined;
  /**
   * On sign-out, every session token the request carries: each session cookie alone, Auth.js's
   * join of them all, and the join of the chunks without the whole cookie. Whichever one
   * Auth.js reads, sign-out must end every session a token names.
   */
  heldSessionTokens?: readonly string[];
  interruption?: Interruption;
  /** The second step's challenge a sign-in carried (src/pages/signin/second-step-cookie.ts). */
  challengeCookie?: string;
  /** A challenge issued after a right password, for the bridge to set as a cookie. */
  issuedChallenge?: string;
  /**
   * Recovery codes the sign-in made (TOTP enrolled on the way in): the answer shows them once,
   * the page's as a page, a JSON one beside its `url`.
   */
  recoveryCodes?: readonly string[];
  /** The device cookie a sign-in carried (src/auth/cookies/device-cookie.ts), unverified. */
  deviceCookie?: string;
  /** A device cookie value for this account, issued when the password was right. */
  issuedDeviceCookie?: string;
  /** What `authorize` decided, once it ran: the details were right, or they were not. */
  signInResult?: 'success' | 'invalid';
  /**
   * The user and credential version `authorize` verified the password at: the jwt callback
   * issues a session only while that version is still the user's (src/sessions/session-store.ts).
   */
  verifiedCredential?: VerifiedCredential;
  /** The type of the error Auth.js reported for this request (its logger), if any. */
  authError?: string;
  /** What to add to the account's record once the answer is out (a failure, a sign-out). */
  accountEvent?: PendingAccountEvent;
  /**
   * A passkey sign-in (`POST /api/auth/callback/passkey`, `action=authenticate`) going through
   * the credentials callback: the assertion is checked instead of a password.
   */
  passkey?: { challengeCookie: string | undefined; secure: boolean };
}

/**
 * Records why the request failed; the first cause wins. Without a context (a read outside
 * Auth.js), the caller's own error handling answers.
 */
export function interrupt(
  context: AuthRequestContext | undefined,
  interruption: Interruption,
): void {
  if (context !== undefined && context.interruption === undefined) {
    context.interruption = interruption;
  }
}

/** Marks a store failure so the route answers 503 rather than a quiet "no session". */
export class StoreUnavailableError extends Error {
  constructor(cause: unknown) {
    super('the database did not answer', { cause });
    this.name = 'StoreUnavailableError';
  }
}

export async function fromStore<T>(
  context: AuthRequestContext | undefined,
  work: () => Promise<T>,
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    interrupt(context, { kind: 'unavailable', error });
    throw new StoreUnavailableError(error);
  }
}
