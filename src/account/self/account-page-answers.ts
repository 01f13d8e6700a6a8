import { HttpError } from '../../http/errors.js';
import { formOutcome, shownNotice, type FormFailure } from '../../pages/account/account-notices.js';
import type {
  AccountPageView,
  SecondFactorView,
  SentForm,
  ShownOnce,
} from '../../pages/account/account-page.js';
import type { Notice } from '../../pages/notices.js';
import type {
  AccountAction,
  AccountDeps,
  ActionResult,
  FormOperation,
  SignedIn,
} from '../action.js';
import { formAction, formGuard } from '../adapter.js';
import type { CsrfRefusal } from '../csrf-guard.js';
import { secondFactorsOf } from '../second-factors.js';
import { createPasskeyStore } from '../passkeys/passkey-store.js';
import { providerNamesOf } from '../identities/actions.js';
import { listAccessTokens } from '../../users/access-tokens.js';
import { noPasswordHash } from '../../users/hasher.js';
import { listIdentities } from '../identities/identity-store.js';
import { factorSummary } from '../totp/totp-store.js';
import { ownHistory } from './list-events.js';
import { ownSessions } from './sessions.js';

/*
 * The account page's handling over plain inputs, without Fastify: what a form post comes to
 * (src/account/self/account-page-routes.ts puts it on the reply) and what the page shows.
 */

/** What the page says besides the account: a notice, a refused form, a secret shown once. */
export interface Said {
  notice: Notice | undefined;
  sent?: SentForm;
  shown?: ShownOnce;
}

/** What a form post came to. */
export type FormAnswer =
  /** Nobody signed in any more: to the sign-in page, which comes back to the account page. */
  | { to: 'signin' }
  /** Done: 303 to the page with `done=<done>` (Post/Redirect/Get). */
  | { to: 'done'; done: string }
  /** The page again: a secret shown once (200), or the refusal with its status and headers. */
  | { to: 'page'; said: Said; status: number; headers?: Record<string, string> };

/** A form post, read and CSRF-checked by the caller. */
export interface FormPost {
  operation: FormOperation;
  body: Record<string, unknown>;
  signedIn: SignedIn;
  /** The CSRF check's refusal for a missing or stale token (a cross-site post never gets here). */
  csrf: CsrfRefusal | undefined;
}

/** What a form post needs of the wing. */
export interface FormPorts {
  /** The (recent) guard. */
  recent(signedIn: SignedIn): Promise<void>;
  /** Runs an action for the request (the adapter: src/account/adapter.ts). */
  run(action: AccountAction, signedIn: SignedIn): Promise<ActionResult>;
}

interface Refusal {
  failure: FormFailure;
  headers?: Record<string, string>;
}

const statusOf = (failure: FormFailure) =>
  failure.code === 'password_mismatch' ? 422 : new HttpError(failure.code).status;

/** `Retry-After` as whole seconds, if it is that. */
function seconds(value: string | undefined): number | undefined {
  return value !== undefined && /^[0-9]{1,6}$/.test(value) ? Number(value) : undefined;
}

/** What stands before the action: the CSRF check, then the page's own check, then the guard. */
async function refusalOf(post: FormPost, ports: FormPorts): Promise<Refusal | undefined> {
  if (post.csrf !== undefined) return { failure: { code: 'csrf', message: post.csrf.message } };
  const own = post.operation.form.precheck?.(post.body);
  if (own !== undefined) return { failure: own };
  if (formGuard(post.operation) === 'recent') {
    try {
      await ports.recent(post.signedIn);
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      return { failure: { code: error.code, message: error.message, field: error.field } };
    }
  }
  return undefined;
}

/** The action's refusal as the page tells it. */
const refusalOfError = (error: HttpError): Refusal => ({
  failure: {
    code: error.code,
    message: error.message,
    field: error.field,
    reason: error.reason,
    retryAfterSeconds: seconds(error.headers['retry-after']),
  },
  headers: error.headers,
});

/** The fields typed back into a refused form. */
const keptValues = (keep: readonly string[], body: Record<string, unknown>) =>
  Object.fromEntries(
    keep.flatMap((field) => {
      const value = body[field];
      return typeof value === 'string' ? [[field, value]] : [];
    }),
  );

/**
 * A form post: checked as the JSON route is (CSRF, the page's own check, the guard; a typed
 * password the adapter proves), the operation's own action run, and its answer as the page
 * gives it: done, a secret shown, or the form again with the refusal and its fields marked.
 */
export async function answerFormPost(post: FormPost, ports: FormPorts): Promise<FormAnswer> {
  const { form } = post.operation;
  let refused = await refusalOf(post, ports);
  if (refused === undefined) {
    try {
      const result = await ports.run(formAction(post.operation), post.signedIn);
      if (form.shows === undefined)
        return { to: 'done', done: form.doneOf?.(result.body) ?? form.name };
      const said = { notice: shownNotice(form.name), shown: form.shows(result.body) };
      return { to: 'page', said, status: 200 };
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      if (error.code === 'unauthenticated') return { to: 'signin' };
      refused = refusalOfError(error);
    }
  }
  const { notice, invalid } = formOutcome(form.name, refused.failure);
  const sent = { form: form.name, values: keptValues(form.keep, post.body), invalid };
  return {
    to: 'page',
    said: { notice, sent },
    status: statusOf(refused.failure),
    headers: refused.headers ?? {},
  };
}

/** The page's view but what the browser's request adds (its CSRF token, where sign-out ends). */
export type AccountPageData = Omit<AccountPageView, 'csrfToken' | 'signOutUrl'>;

/** The second factors' section, or none (factors off and the account has none). */
async function secondFactorView(
  deps: AccountDeps,
  userId: string,
  shown: Partial<SecondFactorView> | undefined,
): Promise<{ view: SecondFactorView | undefined; passkeys: number }> {
  const [factors, totpRow] = await Promise.all([
    secondFactorsOf(deps.factors, userId),
    factorSummary(deps.db, userId),
  ]);
  if (deps.totp === undefined && !factors.totp)
    return { view: undefined, passkeys: factors.passkeys };
  const view = {
    offered: deps.totp !== undefined,
    // A session from before SECOND_FACTOR=required, of an account without a factor.
    needed: deps.totp?.mode === 'required' && !factors.totp && factors.passkeys === 0,
    totp: factors.totp,
    recoveryCodes: factors.recoveryCodes,
    codesFromSignIn: totpRow.codesMadeAtSignIn,
    ...shown,
  };
  return { view, passkeys: factors.passkeys };
}

/**
 * Whether a confirmation link was ever mailed to the account's address as it is now: an account
 * an operator made unverified was mailed nothing, and the page must not say it was.
 */
async function verificationMailed(deps: AccountDeps, userId: string, email: string) {
  const row = await deps.db
    .selectFrom('account_tokens')
    .select('id')
    .where('user_id', '=', userId)
    .where('purpose', 'in', ['verify', 'signup'])
    .where('email', '=', email)
    .executeTakeFirst();
  return row !== undefined;
}

/** What the account page shows `signedIn`, with what to say; null when the account is gone. */
export async function accountPageData(
  deps: AccountDeps,
  signedIn: SignedIn,
  said: Said,
): Promise<AccountPageData | null> {
  const userId = signedIn.user.id;
  const user = await deps.store.view(userId);
  if (user === null) return null;
  const [sessions, events, factors, passkeys, recentUntil, identities, tokens, mailed] =
    await Promise.all([
      ownSessions(deps, signedIn),
      ownHistory(deps, userId),
      secondFactorView(deps, userId, said.shown?.secondFactor),
      createPasskeyStore(deps.db).list(userId),
      deps.recentUntil(signedIn.session.claims.sid),
      identitiesView(deps, userId),
      listAccessTokens(deps.db, userId, deps.now()),
      verificationMailed(deps, userId, user.email),
    ]);
  return {
    user,
    passwordMinLength: deps.passwordMinLength,
    mailEnabled: deps.mail !== undefined,
    verificationMailed: mailed,
    // Each session's method as a person reads it: a provider by its configured name.
    sessions: sessions.map((session) => ({ ...session, method: methodName(deps, session.method) })),
    events,
    notice: said.notice,
    ...(said.sent !== undefined && { sent: said.sent }),
    secondFactor: factors.view,
    passkeys,
    ...(identities !== undefined && { identities }),
    accessTokens: { rows: tokens, made: said.shown?.accessToken },
    noPassword: signedIn.user.passwordHash === noPasswordHash,
    recent: recentUntil !== null && deps.now() < recentUntil,
  };
}

/**
 * `password`, `passkey`, a provider's configured name (`Acme SSO`), a mailed link or code, or
 * the old app's session.
 */
function methodName(deps: AccountDeps, method: string): string {
  if (method === 'carried_over') return 'a session from before the move';
  if (method === 'email') return 'a link or code by mail';
  return method === 'password' || method === 'passkey' ? method : providerNamesOf(deps)(method);
}

/** The account's identities and the providers to link, when any provider is configured. */
async function identitiesView(deps: AccountDeps, userId: string) {
  if (deps.identityProviders.length === 0) return undefined;
  const names = providerNamesOf(deps);
  const rows = await listIdentities(deps.db, userId);
  return {
    rows: rows.map((identity) => ({
      id: identity.id,
      provider: identity.provider,
      providerName: names(identity.provider),
      email: identity.email,
      linkedAt: new Date(identity.linkedAt).toISOString(),
    })),
    providers: deps.identityProviders.map(({ id, name }) => ({ id, name })),
  };
}
