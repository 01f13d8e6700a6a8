import http from 'node:http';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { sendError } from './error-handler.js';
import { HttpError } from './errors.js';

/**
 * Every method Node's parser accepts becomes one Fastify can route (Fastify alone knows nine),
 * so `refuseOtherMethods` can cover them all. CONNECT never reaches a route (connect-refusal.ts).
 */
export function routeEveryMethod(app: FastifyInstance): void {
  for (const method of http.METHODS) {
    if (method === 'CONNECT' || app.supportedMethods.includes(method)) continue;
    app.addHttpMethod(method, { hasBody: true });
  }
}

/**
 * Routes every method `allowed` leaves out on `path` to a 405 with `Allow`, answered before any
 * body is read. Through the router rather than from the 404 handler, so the wrong method reads
 * a target exactly as the right one does: `/api/%68ealth` or an absolute-form
 * `http://host/api/health` is the health route for DELETE too, as it is for GET.
 */
export function refuseOtherMethods(
  app: FastifyInstance,
  path: string,
  allowed: readonly string[],
): void {
  const allow = allowed.join(', ');
  const refuse = (_request: unknown, reply: FastifyReply) =>
    sendError(reply, new HttpError('method_not_allowed', { allow }));
  app.route({
    method: app.supportedMethods.filter((method) => !allowed.includes(method)),
    url: path,
    // Answered here, so the handler (which Fastify requires) is never reached.
    onRequest: (request, reply) => {
      void refuse(request, reply);
    },
    handler: refuse,
  });
}
