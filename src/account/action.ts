import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { CurrentSession, SessionAccess } from '../auth/session-access.js';
import type { Throttle } from '../auth/throttle.js';
import type { Database } from '../db/schema.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import { HttpError } from '../http/errors.js';
import type { MailQueue } from '../mail/mail-queue.js';
import type { PasswordHasher } from '../users/hasher.js';
import type { User, UserStore } from '../users/store.js';
import type { NewAccountEvent } from './model/events.js';
import type { Factor } from './factors.js';
import type { MailRequestLimiter } from './mail-limits.js';
import type { createPasswordProof } from './model/password-proof.js';
import type { AccountStore } from './model/account-store.js';

/** What every account action may use. */
export interface AccountDeps {
  db: Kysely<Database>;
  users: UserStore;
  store: AccountStore;
  sessions: SessionAccess;
  hasher: PasswordHasher;
  provePassword: ReturnType<typeof createPasswordProof>;
  passwordMinLength: number;
  now: () => number;
  /** Until when (ms) a session counts as recent for (recent) routes; null when it is over. */
  recentUntil(sessionId: string): Promise<number | null>;
  /** Writes an event, logging (never answering) a failure to. */
  record(event: NewAccountEvent): Promise<void>;
  /** The mail outbox; undefined or not `enabled`: the mail flows are off (404). */
  mail: MailQueue | undefined;
  /** The sign-in throttle (per account, per address). */
  throttle: Throttle;
  /** Limits on requests that send mail (forgot), with counters of their own. */
  mailRequests: MailRequestLimiter;
  /** MAIL_TOKEN_TTL. */
  mailTokenTtlSeconds: number;
  /** The public origin mailed links are built on. */
  originOf(request: FastifyRequest): string;
  /** SIGNUP=open: `POST /api/account/signup` creates accounts (else 403 `signup_closed`). */
  signupOpen: boolean;
  /** The registered second factors (src/account/factors.ts), in sign-in's order. */
  factors: readonly Factor[];
  /** Where work done after the answer logs its failures. */
  log: { error(fields: object, message: string): void };
}

/** The request's live session and its user, as the (session) guard found them. */
export interface SignedIn {
  session: CurrentSession;
  user: User;
}

export interface ActionInput {
  request: FastifyRequest;
  reply: FastifyReply;
  signedIn: SignedIn;
  /** The parsed body of a POST (CSRF already checked); empty for a GET. */
  body: Record<string, unknown>;
}

/** One route's work; what it returns is sent as JSON with status 200. */
export type AccountAction = (deps: AccountDeps, input: ActionInput) => Promise<unknown>;

/** A route anyone may call (no session guard): the same input without `signedIn`. */
export type AnonymousAction = (
  deps: AccountDeps,
  input: Omit<ActionInput, 'signedIn'>,
) => Promise<unknown>;

/** The client as the account's record keeps it. */
export const clientOf = (request: FastifyRequest) => ({
  ip: request.ip,
  device: request.headers['user-agent'] ?? '',
});

/**
 * Runs an action for a JSON route or a form: a database that cannot do the work now (a lock held
 * past the wait, a lost connection) is the catalogue's 503 `unavailable`, logged, and never a 500.
 */
export async function runAction<Input extends Omit<ActionInput, 'signedIn'>>(
  action: (deps: AccountDeps, input: Input) => Promise<unknown>,
  deps: AccountDeps,
  input: Input,
): Promise<unknown> {
  try {
    return await action(deps, input);
  } catch (error) {
    if (error instanceof HttpError || !isDatabaseUnavailable(error)) throw error;
    input.request.log.warn({ err: error }, 'the database could not serve an account action');
    throw new HttpError('unavailable', { 'retry-after': '5' });
  }
}
