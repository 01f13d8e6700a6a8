import type { FastifyReply, FastifyRequest } from 'fastify';
import { parseCookies } from '../auth/cookies/cookies.js';
import { deviceCookieName } from '../auth/cookies/device-cookie.js';
import type { SessionAccess } from '../auth/session/session-access.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import { HttpError } from '../http/errors.js';
import { storeUnavailable } from '../http/answer.js';
import type { AccountDeps, ActionInput, ActionResult, Client } from './action.js';
import type { PacedWork } from './paced-work.js';
import type { PagePaths } from './paths.js';

/*
 * The one place account actions meet Fastify: the input an action takes is made from the
 * request here, the action is run here (a database that cannot serve it is 503, never a 500),
 * and its result's cookie and work after the answer are put on the reply here, for the JSON
 * routes and every page alike.
 */

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
