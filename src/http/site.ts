import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyServerOptions,
} from 'fastify';
import type { Config } from '../config/index.js';
import { createClientErrorHandler } from './client-error.js';
import { createConnectRefusal } from './connect-refusal.js';
import { defaultConnectionLimits, openFileLimit } from './connection-limits.js';
import { installErrorHandlers } from './error-handler.js';
import { serverWithFrontDoor, type Front } from './front-door.js';
import { routeEveryMethod } from './method-refusal.js';
import { installProxyHint } from './proxy-hint.js';
import { siteBudget } from './request-budget-door.js';
import type { AccessLine } from '../log/access-line.js';
import { installAnswerHooks } from './answer.js';
import {
  accessLineFor,
  accessLineSampler,
  installAccessLog,
  requestIds,
  type LogsAnswer,
} from './access-log.js';

export type SiteConfig = Pick<
  Config,
  | 'authUrl'
  | 'trustProxy'
  | 'keepAliveTimeoutMs'
  | 'connectionLimits'
  | 'bodyLimitBytes'
  | 'requestTimeoutMs'
  | 'fastPaths'
  | 'requestBudget'
  | 'logSuccessSample'
>;

export interface SiteDeps {
  config: SiteConfig;
  logger: FastifyServerOptions['logger'];
  now: () => number;
  isDraining: () => boolean;
}

/** What each capability's `register…` adds its routes and fronts to. */
export interface Site {
  app: FastifyInstance;
  now: () => number;
  isDraining: () => boolean;
  /** AUTH_URL is https: every answer is for https, whatever the connection says. */
  publicIsHttps: boolean;
  /**
   * Whether requests may be answered in front of Fastify. Behind trusted proxies https is per
   * request (X-Forwarded-Proto): only Fastify's routes know, so none are.
   */
  answersInFront: boolean;
  /** Adds a front (src/http/front-door.ts); it sees every request before Fastify does. */
  addFront(front: Front): void;
  /** Fastify's request ids, shared with the access lines written in front of it. */
  nextRequestId(): string;
  /**
   * Whether to write the access line of an answer with this method and status: every error
   * and every write, and LOG_SUCCESS_SAMPLE of the successful reads (chosen at random).
   */
  logsAnswer: LogsAnswer;
  /**
   * The front's access line, built by hand and written to the log's stream (src/log/access-line.ts);
   * undefined where the logger has no stream of ours (pino writes the line).
   */
  accessLine: AccessLine | undefined;
  /** Paths and their methods: the rest is 404, or 405 with `Allow`. */
  declareRoutes(routes: Readonly<Record<string, readonly string[]>>): void;
  /** Whether a path is one of the declared routes. */
  hasRoute(path: string): boolean;
}

function noSchemas(): never {
  throw new Error('Gatehouse routes declare no JSON schemas');
}

/** Fastify's options that are the same for every site. */
function frameworkOptions() {
  return {
    // A request that reaches the service while it drains is answered as usual (with
    // `Connection: close`, answer.ts), not refused: the client sent it before it could know.
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
    // One access line per request (access-log.ts) instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
  } satisfies FastifyServerOptions;
}

/**
 * Fastify behind the front door, with what every route shares: timeouts, connection limits,
 * security headers, the drain, one error handler, access lines. Listens to nothing.
 */
export function createSite(deps: SiteDeps): Site {
  const { config, now, isDraining } = deps;
  const publicIsHttps = config.authUrl?.startsWith('https:') === true;
  const fronts: Front[] = [];
  const nextRequestId = requestIds();
  const parserLog: { current?: FastifyBaseLogger } = {};
  const budget = siteBudget(config.requestBudget, config.trustProxy.length > 0, {
    publicIsHttps,
    isDraining,
    now,
    warn: (details, message) => parserLog.current?.warn(details, message),
  });
  const frontDoor = serverWithFrontDoor(
    fronts,
    {
      requestTimeoutMs: config.requestTimeoutMs,
      connectionTimeoutMs: config.requestTimeoutMs * 2,
      keepAliveTimeoutMs: config.keepAliveTimeoutMs ?? 72_000,
      connections: {
        limits: { ...defaultConnectionLimits(openFileLimit()), ...config.connectionLimits },
        warn: (details, message) => parserLog.current?.warn(details, message),
      },
    },
    budget.admission,
  );
  const app = Fastify({
    ...frameworkOptions(),
    logger: deps.logger,
    genReqId: nextRequestId,
    trustProxy: config.trustProxy.length > 0 ? [...config.trustProxy] : false,
    serverFactory: frontDoor.factory,
    bodyLimit: config.bodyLimitBytes,
    // Fastify calls it with itself as `this`, but typed loosely: the logger is handed over below.
    clientErrorHandler: createClientErrorHandler(publicIsHttps, () => parserLog.current),
  });

  parserLog.current = app.log;
  const refusal = routeEveryMethod(app);
  // A CONNECT request is answered 405, not dropped (Node destroys it when nobody listens).
  app.server.on('connect', createConnectRefusal(publicIsHttps));
  // A drain must not wait on connections that never sent a request (see front-door.ts).
  app.addHook('preClose', (done) => {
    frontDoor.closeUnstarted();
    done();
  });
  installAnswerHooks(app, publicIsHttps, isDraining);
  const routes = new Set<string>();
  // Before the 404 hook, so requests for no route are charged too.
  budget.installHook(app);
  installErrorHandlers(app);
  if (config.trustProxy.length === 0)
    installProxyHint(app, (fields, message) => app.log.warn(fields, message));
  const logsAnswer = accessLineSampler(config.logSuccessSample ?? 1);
  installAccessLog(app, logsAnswer);

  return {
    app,
    now,
    isDraining,
    publicIsHttps,
    answersInFront: config.fastPaths && config.trustProxy.length === 0,
    addFront: (front) => fronts.push(front),
    nextRequestId,
    logsAnswer,
    accessLine: accessLineFor(deps.logger),
    declareRoutes(declared) {
      for (const [path, methods] of Object.entries(declared)) {
        routes.add(path);
        refusal.refuse(path, methods);
      }
    },
    hasRoute: (path) => routes.has(path),
  };
}
