import { decode as authjsDecode } from '@auth/core/jwt';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyServerOptions,
} from 'fastify';
import { createFastHealth } from './health/fast-health.js';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Dialect } from './db/open.js';
import { pingDatabase } from './db/ping.js';
import { createAuthConfig } from './auth/auth-config.js';
import { authCookieNames } from './auth/cookie-names.js';
import { createClientErrorHandler } from './http/client-error.js';
import { createConnectRefusal } from './http/connect-refusal.js';
import { defaultConnectionLimits, openFileLimit } from './http/connection-limits.js';
import { createAuthorize } from './auth/authorize.js';
import { createFastReader } from './auth/fast-read.js';
import { createFrontRead } from './auth/front-read.js';
import type { JweCodec } from './auth/jwe-codec.js';
import { authRoutes, registerAuthRoutes } from './auth/routes.js';
import { createSessionClaims } from './auth/session-claims.js';
import type { SessionStore } from './auth/session-store.js';
import type { Throttle } from './auth/throttle.js';
import type { Config } from './config.js';
import type { Database } from './db/schema.js';
import { healthRoutes, registerHealthRoutes } from './health/routes.js';
import { installErrorHandlers } from './http/error-handler.js';
import { serverWithFrontDoor, type Front } from './http/front-door.js';
import { installSecurityHeaders } from './http/security-headers.js';
import { createAuthPages } from './pages/auth-pages.js';
import type { PasswordHasher } from './users/hasher.js';
import { WorkGate } from './users/work-gate.js';
import type { UserStore } from './users/store.js';

export type AppConfig = Pick<
  Config,
  | 'authSecrets'
  | 'authUrl'
  | 'trustProxy'
  | 'sessionCookiePrefix'
  | 'keepAliveTimeoutMs'
  | 'connectionLimits'
  | 'session'
  | 'bodyLimitBytes'
  | 'requestTimeoutMs'
  | 'fastPaths'
> &
  // Optional: apps built without it (tests) get the default branding.
  Partial<Pick<Config, 'page'>>;

export interface AppDeps {
  config: AppConfig;
  db: Kysely<Database>;
  dialect?: Dialect;
  users: UserStore;
  sessions: SessionStore;
  throttle: Throttle;
  hasher: PasswordHasher;
  /** Gatehouse's synchronous JWE codec; used only while fast paths are on. */
  codec?: JweCodec;
  version: string;
  logger: FastifyServerOptions['logger'];
  now?: () => number;
  isDraining?: () => boolean;
}

const allRoutes: Record<string, readonly string[]> = {
  ...healthRoutes,
  ...Object.fromEntries(
    Object.entries(authRoutes).map(([action, methods]) => [
      `/api/auth/${action}`,
      methods.includes('GET') ? [...methods, 'HEAD'] : methods,
    ]),
  ),
};

function noSchemas(): never {
  throw new Error('Gatehouse routes declare no JSON schemas');
}

/** Builds the whole service from its dependencies; never reads the environment, never listens. */
export function buildApp(deps: AppDeps): FastifyInstance {
  const { config } = deps;
  const now = deps.now ?? (() => Date.now());
  const isDraining = deps.isDraining ?? (() => false);
  const publicIsHttps = config.authUrl?.startsWith('https:') === true;
  // Requests answered in front of Fastify (fast paths on). Behind trusted proxies https is
  // per request (X-Forwarded-Proto): only Fastify's routes know, so there are none.
  const fronts: Front[] = [];
  const inFront = config.fastPaths && config.trustProxy.length === 0;
  if (inFront)
    fronts.push(createFastHealth({ version: deps.version, now, isDraining, publicIsHttps }));
  // Fastify's default request ids, shared with the access lines written in front of it.
  let requestCount = 0;
  const nextRequestId = () => `req-${(requestCount++).toString(36)}`;
  const frontDoor = serverWithFrontDoor(fronts, {
    requestTimeoutMs: config.requestTimeoutMs,
    connectionTimeoutMs: config.requestTimeoutMs * 2,
    keepAliveTimeoutMs: config.keepAliveTimeoutMs ?? 72_000,
    connections: {
      limits: { ...defaultConnectionLimits(openFileLimit()), ...config.connectionLimits },
      warn: (details, message) => parserLog.current?.warn(details, message),
    },
  });
  const parserLog: { current?: FastifyBaseLogger } = {};
  const app = Fastify({
    logger: deps.logger,
    genReqId: nextRequestId,
    trustProxy: config.trustProxy.length > 0 ? [...config.trustProxy] : false,
    serverFactory: frontDoor.factory,
    bodyLimit: config.bodyLimitBytes,
    // A request that reaches the service while it drains is answered as usual (with
    // `Connection: close`, below), not refused: the client sent it before it could know.
    return503OnClosing: false,
    // No route declares a JSON schema (bodies are checked by hand before Auth.js reads them),
    // so Fastify's ajv and fast-json-stringify compilers are never needed; supplying these
    // keeps them from loading at start-up (measured: ~140 ms of the boot before this).
    schemaController: {
      compilersFactory: {
        buildValidator: () => noSchemas,
        buildSerializer: () => noSchemas,
      },
    },
    // One access line per request (below) instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    // Fastify calls it with itself as `this`, but typed loosely: the logger is handed over below.
    clientErrorHandler: createClientErrorHandler(publicIsHttps, () => parserLog.current),
  });

  parserLog.current = app.log;
  // A CONNECT request is answered 405, not dropped (Node destroys it when nobody listens).
  app.server.on('connect', createConnectRefusal(publicIsHttps));
  // A drain must not wait on connections that never sent a request (see front-door.ts).
  app.addHook('preClose', (done) => {
    frontDoor.closeUnstarted();
    done();
  });
  installSecurityHeaders(app, publicIsHttps);
  // While draining, every answer closes its connection, so kept-alive sockets do not hold
  // the process open until their idle timeout.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (isDraining()) reply.header('connection', 'close');
    done(null, payload);
  });
  installErrorHandlers(app, (path) => allRoutes[path]);
  // Paths only: a query string may carry a callbackUrl, never worth a log line. The level is
  // fixed at start-up, so a hook whose lines would be dropped is not installed at all.
  // With logging off, Fastify's logger is a no-op object without isLevelEnabled.
  const enabled = (level: string) =>
    (app.log as Partial<Pick<Logger, 'isLevelEnabled'>>).isLevelEnabled?.(level) ?? false;
  if (enabled('debug')) {
    app.addHook('onRequest', (request, _reply, done) => {
      request.log.debug({ method: request.method, path: request.url.split('?', 1)[0] }, 'received');
      done();
    });
  }
  if (enabled('info')) {
    app.addHook('onResponse', (request, reply, done) => {
      request.log.info(
        {
          method: request.method,
          path: request.url.split('?', 1)[0],
          status: reply.statusCode,
          ms: Math.round(reply.elapsedTime * 10) / 10,
          ip: request.ip,
        },
        'request',
      );
      done();
    });
  }

  registerHealthRoutes(app, {
    version: deps.version,
    now,
    isDraining,
    pingDatabase: () => pingDatabase(deps.db, deps.dialect ?? 'sqlite'),
  });

  const codec = config.fastPaths ? deps.codec : undefined;
  const decode = codec?.decode ?? authjsDecode;
  const authorize = createAuthorize({
    users: deps.users,
    hasher: deps.hasher,
    throttle: deps.throttle,
    now,
    log: app.log,
  });
  const claimsFor = (secure: boolean) =>
    createSessionClaims({
      sessions: deps.sessions,
      absoluteMaxAgeSeconds: config.session.absoluteMaxAgeSeconds,
      now,
      decodeSessionToken: async (token) => {
        try {
          const salt = authCookieNames(secure, config.sessionCookiePrefix).session;
          return await decode({ token, salt, secret: [...config.authSecrets] });
        } catch {
          // An unreadable held token names no session to end.
          return null;
        }
      },
    });
  const fastReader =
    codec === undefined
      ? undefined
      : createFastReader({
          secrets: config.authSecrets,
          session: config.session,
          codec,
          // Same checks as the jwt callback: one source for what a valid session is.
          claims: claimsFor(false),
          now,
          sessionCookiePrefix: config.sessionCookiePrefix,
        });
  if (inFront && fastReader !== undefined) {
    fronts.push(
      createFrontRead({
        reader: fastReader,
        publicOrigin: config.authUrl,
        isDraining,
        log: () => app.log,
        nextRequestId,
      }),
    );
  }
  const configFor = (secure: boolean) =>
    createAuthConfig(
      {
        secrets: config.authSecrets,
        session: config.session,
        sessionCookiePrefix: config.sessionCookiePrefix,
        authorize,
        claims: claimsFor(secure),
        log: app.log,
        codec,
      },
      secure,
    );

  // Up to two sign-ins in Auth.js per hash slot: one does its database work while the other
  // hashes, so the hasher never idles. The second waits in the hasher's queue, so there are
  // only as many as that queue holds, and the hasher never refuses a sign-in let in. The rest
  // wait at the door, in a queue as long as the hasher's.
  const { concurrency, queueMax } = deps.hasher.limits;
  // One client address may fill a quarter of the queue (at least one place), so a flood from
  // one address leaves room for everyone else, who are then let in round-robin.
  const signIns = new WorkGate(
    concurrency + Math.min(concurrency, queueMax),
    queueMax,
    Math.max(1, Math.ceil(queueMax / 4)),
  );
  void app.register((scope, _options, done) => {
    registerAuthRoutes(scope, {
      configs: { http: configFor(false), https: configFor(true) },
      fastReader,
      sessionCookiePrefix: config.sessionCookiePrefix,
      publicOrigin: config.authUrl,
      bodyLimitBytes: config.bodyLimitBytes,
      signIns,
      pages: createAuthPages(config.page),
    });
    done();
  });

  return app;
}
