import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from '../http/errors.js';
import {
  answer as resultOf,
  type AccountDeps,
  type ActionInput,
  type ActionResult,
} from './action.js';
import { runAction, type FlowPorts } from './adapter.js';
import type { PageKit, PageKitSettings } from './page-kit.js';
import { readBody } from './request-body.js';

/** What a flow's pages are registered with (src/account/register.ts hands it to each flow). */
export interface FlowPages<Settings = PageKitSettings> {
  scope: FastifyInstance;
  /** The actions' ports, and the adapter to run them. */
  flow: FlowPorts;
  /** The pages' look, CSP, CSRF pair and answer. */
  kit: PageKit;
  settings: Settings;
}

/** What a flow page's views are given. */
export interface PageView {
  csrfToken: string;
  /** The mailed link's `token` query parameter (GET), if any. */
  token: string | undefined;
  /** The posted form (POST), for the fields typed back into a refused form. */
  body: Record<string, unknown>;
  /** The client's address, for a refusal counted against it. */
  ip: string;
  /** A read for the page: a database that cannot answer now is 503, as for the actions. */
  read<T>(work: () => Promise<T>): Promise<T>;
}

/** A page's markup, or its markup with a status and headers of its own. */
export type PageOutcome =
  | string
  | {
      status: number;
      html: string;
      headers?: Record<string, string>;
      /** A page with no form sets no CSRF cookie. */
      noForm?: true;
    };

/**
 * One flow page, declared: its path, how its GET shows it (reading nothing that spends a
 * secret), the action its POST runs (the JSON route's own), and the pages after a success and
 * after a refusal (words keyed by the refusal's code, field and reason, never its message).
 */
export interface FlowPage<Body, Extra = undefined> {
  path: string;
  /** `no-referrer` (the default) where the URL or the form carries a mailed secret. */
  referrer?: 'no-referrer' | 'same-origin';
  /** The page while the flow is off (sign-up closed): 403 with it, for GET and POST alike. */
  closed?: () => string | null;
  show(view: PageView): PageOutcome | Promise<PageOutcome>;
  /** What the done and refused pages need to know from before the action (read only). */
  before?: (view: PageView) => Promise<Extra>;
  /**
   * The page's own check of the form before the action (a repeated new password that
   * differs): its refusal is answered as the action's would be, and nothing is run or counted.
   */
  precheck?: (body: Record<string, unknown>) => HttpError | undefined;
  action: (deps: AccountDeps, input: ActionInput) => Promise<ActionResult<Body>>;
  done(body: Body, view: PageView, extra: Extra): string;
  refused(error: HttpError, view: PageView, extra: Extra): PageOutcome | Promise<PageOutcome>;
  /** The page words a busy or unavailable service itself (503) instead of the error handler. */
  rendersBusy?: true;
}

/**
 * The browser adapter every flow page shares: GET renders the page with a CSRF pair; POST checks
 * CSRF, runs the same action as the JSON route through the one adapter, and answers the done
 * page, or the refused page with the refusal's status, its Retry-After and its words. A failure
 * of ours (5xx) goes on to the error handler.
 */
export function registerFlowPage<Body, Extra = undefined>(
  pages: FlowPages<unknown>,
  page: FlowPage<Body, Extra>,
): void {
  const { scope, flow, kit } = pages;
  const referrer = page.referrer ?? 'no-referrer';
  const answer = (
    reply: FastifyReply,
    outcome: PageOutcome,
    fallback: { status: number; headers?: Record<string, string> },
    cookie: string | undefined,
  ) => {
    const page = typeof outcome === 'string' ? { ...fallback, html: outcome } : outcome;
    return kit.send(reply, page.status, page.html, {
      cookie: 'noForm' in page ? undefined : cookie,
      referrer,
      ...(page.headers && { headers: page.headers }),
    });
  };
  // No secret in a "closed" page: the referrer may name it to this site.
  const closed = (reply: FastifyReply) => {
    const html = page.closed?.() ?? null;
    return html === null ? null : kit.send(reply, 403, html, { referrer: 'same-origin' });
  };
  const reader =
    (request: FastifyRequest) =>
    async <T>(work: () => Promise<T>): Promise<T> =>
      (await runAction(async () => resultOf(await work()), flow.deps, undefined, request)).body;
  scope.get(page.path, async (request, reply) => {
    const off = closed(reply);
    if (off !== null) return off;
    const csrf = kit.csrfFor(request);
    const view = {
      csrfToken: csrf.token,
      token: kit.tokenOf(request),
      body: {},
      ip: request.ip,
      read: reader(request),
    };
    return answer(reply, await page.show(view), { status: 200 }, csrf.cookie);
  });
  scope.post(page.path, async (request, reply) => {
    const body = readBody(request);
    kit.assertCsrf(request, body);
    const off = closed(reply);
    if (off !== null) return off;
    const csrf = kit.csrfFor(request);
    const view = {
      csrfToken: csrf.token,
      token: undefined,
      body,
      ip: request.ip,
      read: reader(request),
    };
    const extra = (await page.before?.(view)) as Extra;
    let result: ActionResult<Body>;
    try {
      const own = page.precheck?.(body);
      if (own !== undefined) throw own;
      result = await flow.perform(page.action, request, reply, body);
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      if (error.status >= 500 && page.rendersBusy !== true) throw error;
      const fallback = { status: error.status, headers: kit.answerHeaders(error) };
      return answer(reply, await page.refused(error, view, extra), fallback, csrf.cookie);
    }
    return answer(reply, page.done(result.body, view, extra), { status: 200 }, csrf.cookie);
  });
}
