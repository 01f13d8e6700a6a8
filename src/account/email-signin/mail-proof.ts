import type { Kysely } from 'kysely';
import {
  fromStore,
  interrupt,
  type AuthRequestContext,
  type Proceed,
} from '../../auth/request/request-context.js';
import { attempt } from '../../auth/signin/password-proof.js';
import {
  RateLimited,
  SignInCheckRefused,
  type SignedInUser,
} from '../../auth/signin/sign-in-check.js';
import type { Throttle } from '../../auth/signin/throttle.js';
import type { Database } from '../../db/schema.js';
import { readEmail } from '../../users/email.js';
import { noPasswordHash } from '../../users/hasher.js';
import type { User } from '../../users/store.js';
import { markVerified, readUser } from '../../users/writes.js';
import { createAccount } from '../model/addresses.js';
import { consume, consumeById, matchCode, type AccountToken } from '../model/secrets.js';
import { mailProofRefusals } from './email-notices.js';
import { browserOf } from './signin-mail.js';

/*
 * A sign-in by e-mail's proof, posted to `/api/auth/callback/email` and checked in place of a
 * password (Auth.js's credentials callback: its CSRF check, the sign-in door, the session and
 * the answer are the password's): the mailed link's `token` (the button of its page), or the
 * `email` and `code` typed in the browser that asked. Either one used is the mailbox's proof:
 * the address counts as verified, a userless secret (SIGNUP=open) makes the account, and the
 * account goes through the checks a right password does (a second factor still asked for).
 */

export interface MailProofDeps {
  db: Kysely<Database>;
  throttle: Throttle;
  /** SIGNUP=open, as it is now: a new address's secret makes an account only while it is. */
  signupOpen: boolean;
  now: () => number;
  log: { info(fields: object, message: string): void };
}

const purpose = 'email_signin';
const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);

/** The used secret's account, in the transaction that used it: verified, or made (sign-up). */
async function accountOf(
  deps: MailProofDeps,
  trx: Kysely<Database>,
  used: AccountToken,
  context: AuthRequestContext,
): Promise<User | null> {
  const at = deps.now();
  if (used.userId !== null) {
    // The secret came back through the mailbox: that is what verifying the address proves.
    await markVerified(trx, used.userId, at);
    return readUser(trx, used.userId);
  }
  if (!deps.signupOpen) return null;
  const created = await createAccount(trx, {
    email: used.email,
    name: null,
    passwordHash: noPasswordHash,
    verified: true,
    at,
    event: { ip: context.clientIp, device: context.userAgent ?? '' },
    via: { via: 'email' },
  });
  return created === null ? null : readUser(trx, created.userId);
}

/** Refused: Auth.js's `code=<code>`, or throttled when the charge reached a limit. */
function refuse(
  deps: MailProofDeps,
  context: AuthRequestContext,
  code: string,
  why: object,
): never {
  deps.log.info({ reason: code, clientIp: context.clientIp, ...why }, 'sign-in refused');
  context.signInResult = 'invalid';
  throw new SignInCheckRefused(code);
}

function throttled(deps: MailProofDeps, context: AuthRequestContext, seconds: number): never {
  interrupt(context, { kind: 'throttled', retryAfterSeconds: seconds });
  deps.log.info({ reason: 'throttled', clientIp: context.clientIp }, 'sign-in refused');
  context.signInResult = 'invalid';
  throw new RateLimited();
}

/**
 * The link: 256 bits, single use, no guess. Unknown, used, expired or void: one refusal,
 * charged to the client's address as a failed attempt. Used, it counts as the account's
 * mailbox answering: the account's own lock (another person's wrong passwords) does not stop
 * it; every other limit does.
 */
async function withLink(
  deps: MailProofDeps,
  token: string,
  context: AuthRequestContext,
  proceed: Proceed,
): Promise<SignedInUser | null> {
  const at = deps.now();
  const user = await fromStore(context, () =>
    deps.db.transaction().execute(async (trx) => {
      const used = await consume(trx, { purpose, token }, at);
      return used === null ? null : accountOf(deps, trx, used, context);
    }),
  );
  if (user === null || user.disabled) {
    const wait = await fromStore(context, () => deps.throttle.refused(null, context.clientIp, at));
    if (wait !== null) throttled(deps, context, wait);
    return refuse(deps, context, mailProofRefusals.link, { userId: user?.id });
  }
  deps.log.info({ userId: user.id, clientIp: context.clientIp }, 'mailed sign-in link used');
  return proceed(user, 'email', { pastEmailLock: true });
}

/**
 * The code: a guess at 40 bits, so charged first to the address typed and the client (as a
 * reset's code is), past the account's own lock as the link is. It matches only posted back
 * from the browser that asked (./signin-mail.ts's binding); a guess spends a try of every live
 * code of the address, the right one's too, wherever it comes from: five in all.
 */
async function withCode(
  deps: MailProofDeps,
  credentials: Partial<Record<string, unknown>>,
  context: AuthRequestContext,
  proceed: Proceed,
): Promise<SignedInUser | null> {
  const at = deps.now();
  const email = readEmail(text(credentials.email) ?? '');
  const code = text(credentials.code);
  // Auth.js's credentials callback has checked it is this browser's.
  const csrfToken = text(credentials.csrfToken);
  if (email === null || code === undefined || csrfToken === undefined) {
    const wait = await fromStore(context, () =>
      deps.throttle.refused(email, context.clientIp, at, true),
    );
    if (wait !== null) throttled(deps, context, wait);
    return refuse(deps, context, mailProofRefusals.code, { malformed: true });
  }
  const ports = { throttle: deps.throttle, now: deps.now };
  const scope = { email, ip: context.clientIp, knownDevice: true };
  const checked = await attempt(
    { ...ports, store: (work) => fromStore(context, work) },
    scope,
    () =>
      fromStore(context, () =>
        deps.db.transaction().execute(async (trx) => {
          const request = { purpose, email, code, codeBoundTo: browserOf(csrfToken) } as const;
          const match = await matchCode(trx, request, at);
          if (match === null || !(await consumeById(trx, match.id, purpose, at)))
            return { right: false as const, seen: undefined };
          const user = await accountOf(deps, trx, match, context);
          return user === null || user.disabled
            ? { right: false as const, seen: undefined }
            : { right: true as const, value: user };
        }),
      ),
  );
  if ('throttled' in checked) {
    context.accountEvent = { type: 'throttled', email };
    return throttled(deps, context, checked.retryAfterSeconds);
  }
  if (!checked.right) {
    // Recorded only if an account has the address, as a throttled one is.
    const detail = { reason: mailProofRefusals.code, method: 'email' };
    context.accountEvent = { type: 'signin_failed', email, detail };
    return refuse(deps, context, mailProofRefusals.code, {});
  }
  deps.log.info(
    { userId: checked.value.id, clientIp: context.clientIp },
    'mailed sign-in code used',
  );
  return proceed(checked.value, 'email', { charged: true });
}

/** The credentials callback's check for a sign-in by e-mail: the link's token, else the code. */
export function createMailProof(deps: MailProofDeps) {
  return function mailProof(
    credentials: Partial<Record<string, unknown>>,
    context: AuthRequestContext,
    proceed: Proceed,
  ): Promise<SignedInUser | null> {
    const token = text(credentials.token);
    return token === undefined
      ? withCode(deps, credentials, context, proceed)
      : withLink(deps, token, context, proceed);
  };
}
