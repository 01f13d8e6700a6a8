import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { sendError } from '../http/error-handler.js';
import { HttpError } from '../http/errors.js';
import { createSite, type SiteConfig } from '../http/site.js';
import type { AdminPorts } from './admin-call.js';
import { adminRoutes } from './routes.js';
import { importMediaTypes } from './import-routes.js';
import type { AdminTokens } from './tokens.js';

export interface AdminAppDeps {
  /** The public listener's limits (timeouts, body limit, connection caps), applied here too. */
  config: SiteConfig;
  ports: AdminPorts;
  tokens: Pick<AdminTokens, 'authenticate'>;
  logger: FastifyServerOptions['logger'];
  isDraining?: () => boolean;
}

/** One answer for every refused token, whatever was wrong with it: the same bytes each time. */
const refused = new HttpError(
  'unauthenticated',
  { 'www-authenticate': 'Bearer' },
  'A valid admin token is required.',
);

/**
 * The admin API as a Fastify app of its own (listened on by src/admin/start.ts, never on the
 * public port): the public site's protections (src/http/site.ts), a bearer token on every
 * route, JSON in and out, the route table of routes.ts. Never reads the environment, never
 * listens.
 */
export function buildAdminApp(deps: AdminAppDeps): FastifyInstance {
  const site = createSite({
    // No fast paths and no request budget: every caller holds a token, and every answer
    // goes through the token check below.
    config: { ...deps.config, fastPaths: false, requestBudget: undefined, trustProxy: [] },
    logger: deps.logger,
    now: deps.ports.now,
    isDraining: deps.isDraining ?? (() => false),
  });
  const { app } = site;
  // JSON only: a text body would otherwise be read as a string.
  app.removeContentTypeParser('text/plain');
  // An import's JSON Lines stay a stream: the import reads them as they arrive.
  app.addContentTypeParser(importMediaTypes, (_request, payload, done) => done(null, payload));
  const actors = new WeakMap<object, string>();
  app.addHook('onRequest', (request, reply, done) => {
    const label = deps.tokens.authenticate(request.headers.authorization);
    if (label === null) {
      void sendError(reply, refused);
      return;
    }
    actors.set(request, label);
    done();
  });
  const methods: Record<string, string[]> = {};
  for (const route of adminRoutes) {
    // Fastify answers HEAD for every GET route by itself.
    (methods[route.path] ??= []).push(
      ...(route.method === 'GET' ? ['GET', 'HEAD'] : [route.method]),
    );
    app.route({
      method: route.method,
      url: route.path,
      handler: async (request, reply) => {
        const label = actors.get(request) ?? '';
        const actor = { label: `admin API (${label})` };
        const answer = await route.handle({
          params: request.params as Record<string, string>,
          query: request.query as Record<string, string | undefined>,
          body: isRecord(request.body) && !(request.body instanceof Readable) ? request.body : {},
          stream: request.body instanceof Readable ? request.body : undefined,
          actor,
          ports: deps.ports,
        });
        // The record of who did what; the token itself is never logged (only its label).
        request.log.info({ actor: label, route: `${route.method} ${route.path}` }, 'admin call');
        reply.code(answer.status);
        return answer.status === 204 ? reply.send() : reply.send(answer.body);
      },
    });
  }
  site.declareRoutes(methods);
  return app;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
