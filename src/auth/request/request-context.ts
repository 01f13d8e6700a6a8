import type { IssuedDevice } from '../cookies/device-cookie.js';
import type { VerifiedCredential } from '../../sessions/session-store.js';
import type { User } from '../../users/store.js';
import type { FastifyReply } from 'fastify';
import type { AuthPages } from '../../pages/signin/auth-pages.js';
import type { PendingAccountEvent } from './account-events.js';
import { storeUnavailable } from '../../http/answer.js';

/** Whom a sign-in's check signed in, as Auth.js's `authorize` returns it. */
export interface SignedInUser {
  id: string;
  email: string;
  name: string;
}

/**
 * How a way in's own proof is charged to the sign-in throttle when `proceed` runs the checks
 * after it (by default as one attempt of the address and the account, as a password's).
 */
export interface ProofCharge {
  /**
   * The proof came back through the account's mailbox (a mailed link or code): the account's
   * per-email locks do not refuse it, as they spare a device cookie's holder, so another
   * person's wrong passwords cannot lock the owner out of it. Still charged everywhere.
   */
  pastEmailLock?: true;
  /** The way in charged this attempt itself (a code guess, before the code was checked). */
  charged?: true;
}

/** The checks that follow a right password, for an account a way in proved. */
export type Proceed = (
  user: User,
  firstProof: string,
  charge?: ProofCharge,
) => Promise<SignedInUser | null>;

/**
 * A sign-in a way in's own route sends through Auth.js's credentials callback (the same CSRF
 * check, door, session and answer as a password), with what is the way in's for this request
 * (src/auth/way-in.ts).
 */
export interface SignInVia {
  /**
   * Checks what was posted, in place of the password (Auth.js's `authorize`); `proceed` runs the
   * checks that follow a right password for an account this way in proved.
   */
  authorize?(
    credentials: Partial<Record<string, unknown>>,
    context: AuthRequestContext,
    proceed: Proceed,
  ): Promise<SignedInUser | null>;
  /**
   * Judges an identity provider's sign-in once Auth.js has checked the provider's answer
   * (state, PKCE, nonce, the ID token): the account it signs in, through `proceed` (the checks
   * that follow a right password), or where the browser goes instead.
   */
  provider?(
    signIn: { providerId: string; profile: Record<string, unknown> },
    context: AuthRequestContext,
    proceed: Proceed,
  ): Promise<ProviderVerdict>;
  /** `Set-Cookie` lines added to the answer, whatever the outcome. */
  cookies?: readonly string[];
  /**
   * The Auth.js error type a failure Auth.js calls `Configuration` is shown as on the sign-in
   * page (an identity provider down, a callback that fails its checks): the log has the cause,
   * the person gets words they can act on.
   */
  failedAs?: string;
  /** The `detail` of the account's record of a sign-in this way. */
  detail?: Readonly<Record<string, unknown>>;
}

/** An identity provider's sign-in judged: the account signed in, or a redirect (a refusal). */
export type ProviderVerdict = { signedIn: SignedInUser } | { redirect: string };

/**
 * What a successful sign-in's answer shows once beside Auth.js's own (a check made something
 * only this answer may show): fields beside `url` in its JSON answer (stock clients read `url`
 * and ignore them), and for a browser's form post a page in place of its redirect.
 */
export interface SignInAddition {
  json: Readonly<Record<string, unknown>>;
  /** The page, with the redirect's target and cookies; undefined: the redirect as it is. */
  page?: (
    reply: FastifyReply,
    pages: AuthPages,
    redirect: { continueUrl: string; cookies: string[] },
  ) => Promise<FastifyReply> | FastifyReply;
}

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
  /** The sign-in challenge a sign-in carried (src/challenge/challenge-cookie.ts). */
  challengeCookie?: string;
  /** A challenge issued after a right password, for the bridge to set as a cookie. */
  issuedChallenge?: string;
  /** What a check made that the sign-in's answer shows once (SignInAddition). */
  addition?: SignInAddition;
  /** The device cookie a sign-in carried (src/auth/cookies/device-cookie.ts), unverified. */
  deviceCookie?: string;
  /** A device cookie for this account and its device's id, issued when every check passed. */
  issuedDevice?: IssuedDevice;
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
   * A sign-in a way in's own route sent through the credentials callback: its check, its
   * cookies and its record's detail, in place of the password's (src/auth/way-in.ts).
   */
  via?: SignInVia;
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

/** A store failure is 503 `unavailable`, never a quiet "signed out" or "no session". */
export async function orUnavailable<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof StoreUnavailableError) throw storeUnavailable();
    throw error;
  }
}
