import type { Kysely } from 'kysely';
import type { IdentityProviderSetting } from '../config/identity-providers.js';
import type { CurrentSession, SessionAccess } from '../auth/session/session-access.js';
import type { Throttle } from '../auth/signin/throttle.js';
import type { Database } from '../db/schema.js';
import type { MailQueue } from '../mail/mail-queue.js';
import type { AccountForm, FormFailure } from '../pages/account/account-notices.js';
import type { ShownOnce } from '../pages/account/account-page.js';
import type { PasswordHasher } from '../users/hasher.js';
import type { User, UserStore } from '../users/store.js';
import type { NewAccountEvent } from './model/events.js';
import type { PagePaths } from './paths.js';
import type { Factor } from './second-factors.js';
import type { MailRequestLimiter } from './mail-limits.js';
import type { createPasswordProof } from './model/account-password-proof.js';
import type { AccountStore } from './model/account-store.js';
import type { PacedWork } from './paced-work.js';
import type { TotpPorts } from './totp/factor-ports.js';
import type { SecondStep } from './totp/second-step.js';

/*
 * An account action is framework-free: it takes the body, the client and (on a guarded route)
 * the signed-in session, and returns a result; only the adapter (src/account/adapter.ts) touches
 * Fastify, for the JSON routes and the pages alike.
 */

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
  /** SIGNUP=open: `POST /api/account/signup` creates accounts (else 403 `signup_closed`). */
  signupOpen: boolean;
  /** The registered second factors (src/account/second-factors.ts), in sign-in's order. */
  factors: readonly Factor[];
  /** SESSION_MAX_AGE and SESSION_ABSOLUTE_MAX_AGE: a sessions list leaves out those over. */
  sessionLifetime: { maxAgeSeconds: number; absoluteMaxAgeSeconds: number };
  /** The configured identity providers: their names, for the account's identities. */
  identityProviders: readonly IdentityProviderSetting[];
  /** Where work after the answer runs: a queue on a clock of its own (paced-work.ts). */
  afterAnswer: PacedWork;
  /** TOTP's set-up and removal; undefined when SECOND_FACTOR=off (its routes answer 404). */
  totp: TotpPorts | undefined;
  /**
   * The check of an account's second factor (re-authentication, a password reset): always
   * there, since an account that enrolled needs its factor whatever SECOND_FACTOR says.
   */
  secondStep: SecondStep;
  /** Where work done after the answer logs its failures and what it did not do. */
  log: {
    error(fields: object, message: string): void;
    warn(fields: object, message: string): void;
  };
}

/** The request's live session and its user, as the (session) guard found them. */
export interface SignedIn {
  session: CurrentSession;
  user: User;
}

/** Where a request came from, as the account's record and its mailed links need it. */
export interface Client {
  ip: string;
  /** The User-Agent ('' when none). */
  device: string;
  /** The public origin mailed links are built on (AUTH_URL, or the request's in development). */
  origin: string;
  /** Where the pages live on `origin` (ACCOUNT_PAGES_PATH): the mailed links' paths. */
  pages: PagePaths;
  /** The device cookie the request carries (a credential: never logged, never recorded). */
  deviceCookie?: string | undefined;
}

export interface ActionInput {
  /** The parsed body of a POST (CSRF already checked); empty for a GET. */
  body: Record<string, unknown>;
  /** The route's path parameters (`/sessions/:id/revoke`'s `id`); empty for most routes. */
  params: Readonly<Record<string, string>>;
  client: Client;
  signedIn: SignedIn;
  /**
   * The id of the session the request holds, if any, on a route anyone may call (an address
   * change confirmed from a signed-in browser keeps that session); null when none or unreadable.
   */
  requestSessionId(): Promise<string | null>;
}

/** Work that must wait until the answer is out, so its time can never show in the answer. */
export interface AfterAnswer {
  /** What failed, for the log line when it does. */
  failure: string;
  run(): Promise<void>;
}

/** What an action answers: its body, and what the adapter does with the reply. */
export interface ActionResult<Body = unknown> {
  body: Body;
  /** The success status, when it is not the route's. */
  status?: number;
  /** A cookie to set (a password change re-issues the session under a new id). */
  setCookie?: string;
  afterAnswer?: AfterAnswer;
}

/** One route's work on a guarded route. */
export type AccountAction<Body = unknown> = (
  deps: AccountDeps,
  input: ActionInput,
) => Promise<ActionResult<Body>>;

/** A route anyone may call (no session guard): the same input without `signedIn`. */
export type AnonymousAction<Body = unknown> = (
  deps: AccountDeps,
  input: Omit<ActionInput, 'signedIn'>,
) => Promise<ActionResult<Body>>;

/** A result with nothing but its body. */
export const answer = <Body>(body: Body): ActionResult<Body> => ({ body });

/**
 * The password typed in an account page's form (`currentPassword`), which stands in for the
 * JSON route's (recent) guard there: the adapter applies it around the operation's own action
 * (src/account/adapter.ts), so a page needs no action of its own.
 */
export type TypedPassword = (
  deps: AccountDeps,
  input: ActionInput,
  action: AccountAction,
) => Promise<ActionResult>;

/**
 * An operation's form on the account page: a plain form post to `<the page><path>` that runs
 * the operation's own action, so the JSON route and the page answer from one implementation.
 */
export interface OperationForm {
  name: AccountForm;
  /** Where it posts under the page when not at the JSON route's path (an `id` field instead). */
  path?: string;
  /** The fields typed back into a refused form (never a password). */
  keep: readonly string[];
  /** The page's own check before the action: when it fails nothing is checked or counted. */
  precheck?: (body: Record<string, unknown>) => FormFailure | undefined;
  /** The password typed in the form; with it the page's guard is (session), whatever the route's. */
  typedPassword?: TypedPassword;
  /** The success notice's `done` value for the action's answer (default: the form's name). */
  doneOf?: (answer: unknown) => string;
  /**
   * The answer is shown on the page itself rather than redirected to (a secret shown once: the
   * set-up's QR code, new recovery codes, a new access token).
   */
  shows?: (answer: unknown) => ShownOnce;
}

/**
 * One account operation: its JSON route under /api/account, who may call it, and its form on
 * the account page when it has one. Who: (session), or (recent) on top of it (accounts spec,
 * Conventions), or anyone (`none`: the e-mailed-secret flows; CSRF still holds for every POST).
 */
export type AccountOperation = {
  /** Under /api/account; a path parameter as Fastify writes it (`:id`). */
  path: string;
  method: 'GET' | 'POST';
  /** The success status (200 unless the spec says otherwise). */
  status?: number;
  /** A mail flow: absent (404), and no form, when mail is off (production without SMTP_URL). */
  needsMail?: boolean;
  /** A second factor's: absent (404), and no form, when SECOND_FACTOR=off. */
  needsFactors?: boolean;
} & (
  | { guard: 'session' | 'recent'; action: AccountAction; form?: OperationForm }
  | { guard: 'none'; action: AnonymousAction; form?: never }
);

/** An operation that has a form on the account page. */
export type FormOperation = Extract<AccountOperation, { guard: 'session' | 'recent' }> & {
  form: OperationForm;
};
