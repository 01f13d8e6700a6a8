import type { FastifyReply, FastifyRequest } from 'fastify';
import { parseCookies } from '../auth/cookies/cookies.js';
import { deviceCookieName } from '../auth/cookies/device-cookie.js';
import type { SessionAccess } from '../auth/session/session-access.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import { isLoopbackOrigin } from '../config/auth.js';
import { originOf } from '../auth/request/request-site.js';
import { HttpError, invalidField } from '../http/errors.js';
import { storeUnavailable } from '../http/answer.js';
import type { AccountForm } from '../pages/account/account-notices.js';
import type {
  AccountAction,
  AccountDeps,
  AccountOperation,
  ActionInput,
  ActionResult,
  Client,
  FormOperation,
  TypedPassword,
} from './action.js';
import { assertRecent } from './guards.js';
import type { PacedWork } from './paced-work.js';
import type { PagePaths } from './paths.js';
import { reauthenticate } from './self/reauthenticate.js';

/*
 * The one place account actions meet Fastify: the input an action takes is made from the
 * request here, the action is run here (a database that cannot serve it is 503, never a 500),
 * and its result's cookie and work after the answer are put on the reply here, for the JSON
 * routes and every page alike.
 */

export interface LinkOriginSettings {
  /** AUTH_URL: links are built on it, always. */
  authUrl: string | undefined;
  /** AUTH_TRUST_HOST=true: the operator says the Host header is the proxy's, not a client's. */
  authTrustHost?: boolean | undefined;
  log: { warn(fields: object, message: string): void };
}

/**
 * The origin mailed links are built on. Production requires AUTH_URL (or AUTH_TRUST_HOST=true),
 * so its links never follow a Host header a client chose; the same rule holds wherever mail is
 * sent. Without either, a request whose Host is this machine (localhost, 127.0.0.0/8, [::1]:
 * development) gets links on it; any other Host does not (a client on the network could
 * otherwise have a reset link for someone else's account point to its own site): the links go
 * to http://localhost on the port the request came in on, and the service warns once, naming
 * AUTH_URL.
 */
export function createLinkOrigin(
  settings: LinkOriginSettings,
): (request: FastifyRequest) => string {
  let warned = false;
  return (request) => {
    const origin = originOf(request, settings.authUrl);
    if (settings.authUrl !== undefined || settings.authTrustHost === true) return origin;
    if (isLoopbackOrigin(origin)) return origin;
    const fallback = `http://localhost:${String(request.socket.localPort)}`;
    if (!warned) {
      warned = true;
      settings.log.warn(
        { setting: 'AUTH_URL', host: request.headers.host, linksOn: fallback },
        'AUTH_URL is not set and a request came for another host than this machine: mailed links are built on localhost, never on a Host header a client chose. Set AUTH_URL to the public origin, e.g. AUTH_URL=https://auth.example.com',
      );
    }
    return fallback;
  };
}

/** The client as the account's record and mailed links need it. */
export const clientOf = (
  request: FastifyRequest,
  originOf: (r: FastifyRequest) => string,
  pages: PagePaths,
): Client => {
  const cookies = parseCookies(request.headers.cookie);
  // Either name: over https only the __Host- one can be set, and either must carry its MAC.
  const deviceCookie = cookies.get(deviceCookieName(true)) ?? cookies.get(deviceCookieName(false));
  return {
    ip: request.ip,
    device: request.headers['user-agent'] ?? '',
    origin: originOf(request),
    pages,
    ...(deviceCookie !== undefined && { deviceCookie }),
  };
};

/** Where mailed links are built (origin and pages) and how a request's session is read. */
export interface AdapterPorts {
  originOf: (r: FastifyRequest) => string;
  pages: PagePaths;
  sessions: Pick<SessionAccess, 'current'>;
}

/** An action's input from a request (without `signedIn`, which the guard adds). */
export function inputOf(
  request: FastifyRequest,
  body: Record<string, unknown>,
  ports: AdapterPorts,
): Omit<ActionInput, 'signedIn'> {
  return {
    body,
    params: (request.params ?? {}) as Record<string, string>,
    client: clientOf(request, ports.originOf, ports.pages),
    async requestSessionId() {
      try {
        return (await ports.sessions.current(request))?.claims.sid ?? null;
      } catch {
        // The session could not be read: the caller then keeps none, the safe side.
        return null;
      }
    },
  };
}

/**
 * Runs an action: a database that cannot do the work now (a lock held past the wait, a lost
 * connection) is the catalogue's 503 `unavailable`, logged, and never a 500.
 */
export async function runAction<Input, Body>(
  action: (deps: AccountDeps, input: Input) => Promise<ActionResult<Body>>,
  deps: AccountDeps,
  input: Input,
  request: FastifyRequest,
): Promise<ActionResult<Body>> {
  try {
    return await action(deps, input);
  } catch (error) {
    if (error instanceof HttpError || !isDatabaseUnavailable(error)) throw error;
    request.log.warn({ err: error }, 'the database could not serve an account action');
    throw storeUnavailable();
  }
}

/**
 * Puts a result's cookie on the reply, and its work after the answer into the paced queue
 * (src/account/paced-work.ts) once the answer is out: 'close' follows the last byte of the
 * answer (or a dropped connection), never comes before it, and the queue runs the work on a
 * clock of its own, so not even the next request on the connection waits for it.
 */
export function deliver(reply: FastifyReply, result: ActionResult, paced: PacedWork): void {
  if (result.setCookie !== undefined) reply.header('set-cookie', result.setCookie);
  const after = result.afterAnswer;
  if (after !== undefined) reply.raw.once('close', () => paced.push(after));
}

/** Runs an action for a request and puts its result on the reply; returns the result. */
export type Perform = <Body>(
  action: (deps: AccountDeps, input: ActionInput) => Promise<ActionResult<Body>>,
  request: FastifyRequest,
  reply: FastifyReply,
  body: Record<string, unknown>,
  signedIn?: ActionInput['signedIn'],
) => Promise<ActionResult<Body>>;

/** The adapter bound to the wing's ports, for the JSON routes and the pages. */
export function createPerform(deps: AccountDeps, ports: AdapterPorts): Perform {
  return async (action, request, reply, body, signedIn) => {
    // An anonymous action never reads `signedIn`; a guarded one is only run with it.
    const input = { ...inputOf(request, body, ports), signedIn } as ActionInput;
    const result = await runAction(action, deps, input, request);
    deliver(reply, result, deps.afterAnswer);
    return result;
  };
}

/** What a flow's pages are handed: the actions' ports, and the adapter to run them. */
export interface FlowPorts {
  deps: AccountDeps;
  perform: Perform;
}

/** The password the form carried (`currentPassword`), or undefined when none or empty. */
function typedPasswordOf(input: ActionInput): string | undefined {
  const password = input.body.currentPassword;
  return typeof password === 'string' && password !== '' ? password : undefined;
}

/**
 * The typed password, required (none: 422 `invalid_field` on `currentPassword`), proved as
 * `POST /api/account/reauthenticate` proves one (throttled as a sign-in, the session recent
 * from now); then the action.
 */
export const reauthenticatedByTypedPassword: TypedPassword = async (deps, input, action) => {
  const password = typedPasswordOf(input);
  if (password === undefined) throw invalidField('currentPassword');
  await reauthenticate(deps, { ...input, body: { password } });
  return action(deps, input);
};

/**
 * The typed password when the form carried one (proved as above), then the (recent) guard
 * either way: a session that is recent already needs no password.
 */
export const recentOrTypedPassword: TypedPassword = async (deps, input, action) => {
  const password = typedPasswordOf(input);
  if (password !== undefined) await reauthenticate(deps, { ...input, body: { password } });
  await assertRecent(deps, input.signedIn);
  return action(deps, input);
};

/** What a form runs: the operation's own action, behind the form's typed password if any. */
export function formAction(operation: FormOperation): AccountAction {
  const typed = operation.form.typedPassword;
  if (typed === undefined) return operation.action;
  return (deps, input) => typed(deps, input, operation.action);
}

/** The page's guard: a typed password stands in for the route's (recent). */
export const formGuard = (operation: FormOperation): 'session' | 'recent' =>
  operation.form.typedPassword === undefined ? operation.guard : 'session';

/**
 * A (recent) operation on one of the account's things named by the path's `{id}`, with its form
 * on the account page naming it in an `id` field and asking for the current password when the
 * session is not recent: a passkey's removal, an identity's unlink.
 */
export function recentByIdOperation(
  path: string,
  action: AccountAction,
  form: { name: AccountForm; path: string },
): AccountOperation {
  return {
    path,
    method: 'POST',
    guard: 'recent',
    action,
    form: { ...form, keep: ['id'], typedPassword: recentOrTypedPassword },
  };
}
