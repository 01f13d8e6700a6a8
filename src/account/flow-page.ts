import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HttpError } from '../http/errors.js';
import type { AccountDeps, ActionInput, ActionResult } from './action.js';
import type { FlowPorts } from './adapter.js';
import type { PageKit } from './page-kit.js';
import { readBody } from './request-body.js';

/** What a flow page's views are given. */
export interface PageView {
  csrfToken: string;
  /** The mailed link's `token` query parameter (GET), if any. */
  token: string | undefined;
  /** The posted form (POST), for the fields typed back into a refused form. */
  body: Record<string, unknown>;
}

/**
 * One flow page, declared: its path, how its GET shows it (reading nothing that spends a
 * secret), the action its POST runs (the JSON route's own), and the pages after a success and
 * after a refusal (words keyed by the refusal's code, field and reason, never its message).
 */
export interface FlowPage<Body> {
  path: string;
  /** `no-referrer` (the default) where the URL or the form carries a mailed secret. */
  referrer?: 'no-referrer' | 'same-origin';
  show(view: PageView, request: FastifyRequest): string;
  action: (deps: AccountDeps, input: ActionInput) => Promise<ActionResult<Body>>;
  done(body: Body, view: PageView): string;
  refused(error: HttpError, view: PageView): string;
}

/**
 * The browser adapter every flow page shares: GET renders the page with a CSRF pair; POST checks
 * CSRF, runs the same action as the JSON route through the one adapter, and answers the done
 * page, or the page again with the refusal's status, its Retry-After and its words. A failure
 * of ours (5xx) goes on to the error handler.
 */
export function registerFlowPage<Body>(
  scope: FastifyInstance,
  flow: FlowPorts,
  kit: PageKit,
  page: FlowPage<Body>,
): void {
  const referrer = page.referrer ?? 'no-referrer';
  scope.get(page.path, async (request, reply) => {
    const csrf = kit.csrfFor(request);
    const view = { csrfToken: csrf.token, token: kit.tokenOf(request), body: {} };
    return kit.send(reply, 200, page.show(view, request), { cookie: csrf.cookie, referrer });
  });
  scope.post(page.path, async (request, reply) => {
    const body = readBody(request);
    kit.assertCsrf(request, body);
    const csrf = kit.csrfFor(request);
    const view = { csrfToken: csrf.token, token: undefined, body };
    let result: ActionResult<Body>;
    try {
      result = await flow.perform(page.action, request, reply, body);
    } catch (error) {
      if (!(error instanceof HttpError) || error.status >= 500) throw error;
      return kit.send(reply, error.status, page.refused(error, view), {
        cookie: csrf.cookie,
        referrer,
        headers: kit.answerHeaders(error),
      });
    }
    return kit.send(reply, 200, page.done(result.body, view), { cookie: csrf.cookie, referrer });
  });
}
