import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { clientGroup } from '../traffic/client-group.js';
import { RequestBudget } from '../traffic/request-budget.js';
import { RecentCache } from '../util/recent-cache.js';
import { sendError } from './error-handler.js';
import { errorAnswer, securityHead, writeAnswer } from './answer.js';
import { HttpError } from './errors.js';

/**
 * What a request costs: one token when a front answers it, this many when it reaches Fastify
 * (Auth.js, the pages, every refusal Fastify writes), which costs several times a front answer.
 * A client cannot pick the slow path to get more work for its budget.
 */
export const fastifyRequestCost = 4;

/** Liveness and readiness probes are never refused: a platform must see the process is up. */
function isProbe(request: IncomingMessage | { method: string; url: string }): boolean {
  const { method, url } = request;
  return (
    (method === 'GET' || method === 'HEAD') &&
    (url === '/api/health' || url === '/api/health/ready')
  );
}

export interface BudgetDoorOptions {
  budget: RequestBudget;
  publicIsHttps: boolean;
  isDraining: () => boolean;
  /** Called at most every 10 s while requests are refused (a flood writes no line per request). */
  warn: (details: Record<string, unknown>, message: string) => void;
  now: () => number;
}

/** Where the front door asks the budget: before any front, and again before Fastify. */
export interface Admission {
  /** One token before any front; false: answered 429. */
  arrive(request: IncomingMessage, response: ServerResponse): boolean;
  /** The rest of `fastifyRequestCost` before Fastify; false: answered 429. */
  toFastify(request: IncomingMessage, response: ServerResponse): boolean;
}

/**
 * The request budget (src/traffic/request-budget.ts) in the front door, by the connection's
 * address: used when no proxy is trusted, so the peer is the client. Refusals are answered
 * 429 with `Retry-After`, in the error catalogue's shape with the security headers.
 */
export function createBudgetDoor(options: BudgetDoorOptions): Admission {
  const { budget } = options;
  const groups = new RecentCache<string, string>(1024);
  const security = securityHead(options.publicIsHttps);
  let lastWarningAt = -Infinity;
  let refusedSinceWarning = 0;

  const groupOf = (request: IncomingMessage) => {
    const address = request.socket.remoteAddress ?? '';
    let group = groups.get(address);
    if (group === undefined) {
      group = clientGroup(address);
      groups.set(address, group);
    }
    return group;
  };

  const charge = (request: IncomingMessage, response: ServerResponse, cost: number) => {
    if (isProbe(request)) return true;
    const group = groupOf(request);
    const retryAfterSeconds = budget.take(group, cost);
    if (retryAfterSeconds === 0) return true;
    // As Fastify's hook answers it behind proxies (below).
    const refused = errorAnswer('rate_limited', security, options.isDraining(), {
      headers: { 'retry-after': String(retryAfterSeconds) },
    });
    writeAnswer(response, refused.status, refused.head, refused.body);
    refusedSinceWarning += 1;
    if (options.now() - lastWarningAt >= 10_000) {
      options.warn(
        { refused: refusedSinceWarning, group },
        'request budget exceeded: requests are answered 429',
      );
      lastWarningAt = options.now();
      refusedSinceWarning = 0;
    }
    return false;
  };

  return {
    arrive: (request, response) => charge(request, response, 1),
    toFastify: (request, response) => charge(request, response, fastifyRequestCost - 1),
  };
}

/**
 * The request budget behind trusted proxies, where only Fastify knows the client's address
 * (`request.ip`, from `X-Forwarded-For`): every request is charged `fastifyRequestCost` before
 * routing, and a refusal is Fastify's own 429 answer (with its access line).
 */
export function installBudgetHook(app: FastifyInstance, budget: RequestBudget): void {
  app.addHook('onRequest', (request, reply, done) => {
    if (isProbe(request)) return done();
    const retryAfterSeconds = budget.take(clientGroup(request.ip), fastifyRequestCost);
    if (retryAfterSeconds === 0) return done();
    void sendError(
      reply,
      new HttpError('rate_limited', { 'retry-after': String(retryAfterSeconds) }),
    );
  });
}

// The budget is in the front door, or not configured: Fastify has nothing to install.
const noHook = (): void => undefined;

/**
 * The request budget where it applies, when configured: in the front door where the peer is
 * the client, else (behind trusted proxies, where only Fastify knows the client's address) as
 * Fastify's hook, installed before the 404 hook so requests for no route are charged too.
 */
export function siteBudget(
  limits: { perSecond: number; burst: number } | undefined,
  behindProxies: boolean,
  door: Omit<BudgetDoorOptions, 'budget'>,
): { admission: Admission | undefined; installHook(app: FastifyInstance): void } {
  if (limits === undefined || limits.perSecond <= 0)
    return { admission: undefined, installHook: noHook };
  // A burst below one Fastify request's cost would refuse every such request.
  const budget = new RequestBudget(
    { perSecond: limits.perSecond, burst: Math.max(limits.burst, fastifyRequestCost) },
    door.now,
  );
  if (behindProxies)
    return { admission: undefined, installHook: (app) => installBudgetHook(app, budget) };
  return { admission: createBudgetDoor({ ...door, budget }), installHook: noHook };
}
