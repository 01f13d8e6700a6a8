import { CredentialsSignin } from '@auth/core/errors';
import type { ChallengePurpose } from '../../challenge/challenges.js';
import type { User } from '../../users/store.js';
import type { SignInAddition } from '../request/request-context.js';

export type { SignedInUser, SignInAddition } from '../request/request-context.js';

/** Auth.js turns this into `?error=CredentialsSignin&code=rate_limited`. */
export class RateLimited extends CredentialsSignin {
  override code = 'rate_limited';
}

/**
 * A check after the password refused the sign-in (an unverified address, a second factor asked
 * for or wrong). Auth.js turns it into `?error=CredentialsSignin&code=<code>`, so an unchanged
 * `signIn('credentials', { redirect: false })` returns the code; no session is issued.
 */
export class SignInCheckRefused extends CredentialsSignin {
  constructor(code: string) {
    super();
    this.code = code;
  }
}

/** What a check after the password says: go on (with what it proved), or refuse with a code. */
export type SignInVerdict =
  | {
      ok: true;
      proof?: string;
      /** What this sign-in's answer shows once beside Auth.js's own. */
      addition?: SignInAddition;
      /** The check spent the sign-in's challenge itself, in the transaction of its change. */
      challengeSpent?: true;
    }
  | {
      ok: false;
      /** The code the client receives (`email_unverified`, `second_factor_required`, …). */
      code: string;
      /** A limit is reached: answered as a throttled sign-in (429 with Retry-After). */
      retryAfterSeconds?: number;
      /**
       * A code this post carried was wrong: the account's record notes a failed sign-in. Without
       * it the refusal asks for a further step after a right password (a code, a confirmed
       * address, another way in), and the record notes nothing: nothing failed.
       */
      wrong?: true;
      /**
       * The challenge this refusal leaves in the browser, when the check opened it itself
       * (with what goes with it, such as a mailed code); else sign-in issues one.
       */
      challenge?: string;
    };

/** The sign-in being checked, as a check after the password sees it. */
export interface SignInAttempt {
  /** Every field the client posted (a second factor's code rides beside the password). */
  credentials: Partial<Record<string, unknown>>;
  ip: string;
  /** The User-Agent ('' when none), for the account's record. */
  device: string;
  /** The client proved an earlier sign-in (device cookie): charged as the password was. */
  knownDevice: boolean;
  /** The public origin, for any link a check mails. */
  origin: string;
  /** The sign-in challenge, when it stands for the password in this post. */
  challenge?: string | undefined;
  /** What that challenge was issued for: a check takes it for that alone. */
  challengePurpose?: ChallengePurpose | undefined;
  /** What proved the account before the checks: `password`, or `identity:<provider>`. */
  firstProof: string;
}

/**
 * One check that runs after a right password, in the order the ways in are registered
 * (src/account/ways-in.ts). A check runs only once the password is proven, so a guesser learns
 * nothing from its refusal.
 */
export interface SignInCheck {
  /** For the log and the account's record. */
  name: string;
  check(user: User, attempt: SignInAttempt): Promise<SignInVerdict>;
}
