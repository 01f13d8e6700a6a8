import http from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import FindMyWay from 'find-my-way';
import { sendError } from './error-handler.js';
import { HttpError } from './errors.js';

/** Refuses, on one site, every method a path does not allow. */
export interface MethodRefusal {
  /**
   * Routes every method `allowed` leaves out on `path` to a 405 with `Allow`, answered before
   * any body is read. Through the router rather than from the 404 handler, so the wrong method
   * reads a target exactly as the right one does: `/api/%68ealth` or an absolute-form
   * `http://host/api/health` is the health route for DELETE too, as it is for GET.
   */
  refuse(path: string, allowed: readonly string[]): void;
}

/**
 * Every method Node's parser accepts becomes one Fastify can route (Fastify alone knows
 * seven), so refusals can cover them all. CONNECT never reaches a route (connect-refusal.ts).
 *
 * One catch-all route, for every method, takes what no route of the site took: it looks the
 * target up in a router of its own holding every declared path once, with the options Fastify's
 * router has (its defaults: case sensitive, no trailing or duplicate slash folding, no `;`
 * delimiter, parameters up to 100 characters), so it finds exactly the path Fastify would: a
 * 405 with that path's `Allow`, or the 404 every unknown path gets (also for a method the path
 * declares but whose route this start did not register). The site's own routes always win
 * over a catch-all in Fastify's router, so this sees only what they leave. A refusal route per path and per method was 35
 * trees in that router, each node compiled with `new Function`: the largest part of start-up's
 * route building (docs/performance.md).
 */
export function routeEveryMethod(app: FastifyInstance): MethodRefusal {
  const own = [...app.supportedMethods];
  const others = http.METHODS.filter((method) => method !== 'CONNECT' && !own.includes(method));
  for (const method of others) app.addHttpMethod(method, { hasBody: true });
  // Fastify's router options as src/http/site.ts leaves them (`;` is no delimiter by default).
  const declared = FindMyWay({
    caseSensitive: true,
    ignoreTrailingSlash: false,
    ignoreDuplicateSlashes: false,
    maxParamLength: 100,
  });
  const noHandler = () => undefined;
  const answer = (request: FastifyRequest, reply: FastifyReply) => {
    const found = declared.find('GET', request.url);
    const allowed = (found?.store as { allowed: readonly string[]; allow: string } | undefined) ?? {
      allowed: [],
      allow: '',
    };
    return sendError(
      reply,
      allowed.allowed.length === 0 || allowed.allowed.includes(request.method)
        ? new HttpError('not_found')
        : new HttpError('method_not_allowed', { allow: allowed.allow }),
    );
  };
  app.route({
    method: [...own, ...others],
    url: '*',
    // Answered here, before any body is read; the handler (which Fastify requires) is never
    // reached.
    onRequest: (request, reply) => {
      void answer(request, reply);
    },
    handler: answer,
  });
  return {
    refuse(path, allowed) {
      declared.on('GET', path, noHandler, { allowed, allow: allowed.join(', ') });
    },
  };
}
