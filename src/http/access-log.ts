import type { IncomingMessage } from 'node:http';
import type { FastifyBaseLogger, FastifyInstance, FastifyServerOptions } from 'fastify';
import type { Logger } from 'pino';
import { createAccessLine, type AccessLine } from '../log/access-line.js';

/*
 * The access line, for Fastify's hooks and for the answers written in front of Fastify alike:
 * one line per answer (`reqId`, `method`, the path without its query, `status`, `ms`, `ip`; the
 * message `request`), a `received` line at debug, request ids from one series, and the same
 * sampling of successful reads (LOG_SUCCESS_SAMPLE).
 */

/** Whether to write an answer's access line, by its method and status. */
export type LogsAnswer = (method: string | undefined, status: number) => boolean;

/** Fastify's request ids, shared with the access lines written in front of it. */
export function requestIds(): () => string {
  let requestCount = 0;
  return () => `req-${(requestCount++).toString(36)}`;
}

/**
 * Which access lines to write. One client reading at 5,000 req/s writes ~65 GB of lines a day:
 * a fraction of the successful reads (GET, HEAD; 2xx, 3xx) tells as much about traffic, while
 * errors and writes (sign-ins, sign-outs) are each worth their line.
 */
export function accessLineSampler(fraction: number): LogsAnswer {
  if (fraction >= 1) return () => true;
  return (method: string | undefined, status: number) =>
    status >= 400 || (method !== 'GET' && method !== 'HEAD') || Math.random() < fraction;
}

// With logging off, Fastify's logger is a no-op object without isLevelEnabled.
const levelEnabled = (log: FastifyBaseLogger, level: string) =>
  (log as Partial<Pick<Logger, 'isLevelEnabled'>>).isLevelEnabled?.(level) ?? false;

/**
 * Fastify's side. Paths only: a query string may carry a callbackUrl, never worth a log line.
 * The level is fixed at start-up, so a hook whose lines would be dropped is not installed at all.
 */
export function installAccessLog(app: FastifyInstance, logsAnswer: LogsAnswer): void {
  if (levelEnabled(app.log, 'debug')) {
    app.addHook('onRequest', (request, _reply, done) => {
      request.log.debug({ method: request.method, path: request.url.split('?', 1)[0] }, 'received');
      done();
    });
  }
  if (levelEnabled(app.log, 'info')) {
    app.addHook('onResponse', (request, reply, done) => {
      if (!logsAnswer(request.method, reply.statusCode)) return done();
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
}

/** The front's access line, on the logger's own stream; none where pino writes elsewhere. */
export function accessLineFor(logger: FastifyServerOptions['logger']): AccessLine | undefined {
  if (typeof logger !== 'object' || logger === null || !('stream' in logger)) return undefined;
  const stream = logger.stream;
  return stream === undefined ? undefined : createAccessLine(stream);
}

export interface FrontLogOptions {
  /** Fastify's logger (it exists once the app is built, before the first request). */
  log: () => FastifyBaseLogger;
  /** Fastify's request-id generator, so lines from here and from Fastify share one series. */
  nextRequestId: () => string;
  /** LOG_SUCCESS_SAMPLE (above); all if omitted. */
  logsAnswer?: LogsAnswer | undefined;
  /** The access line built by hand (src/log/access-line.ts); through pino if omitted. */
  accessLine?: AccessLine | undefined;
}

/** The lines of an answer written in front of Fastify, as Fastify's hooks above write them. */
export interface FrontLog {
  /** The operator's log (errors). */
  log(): FastifyBaseLogger;
  /** A request id from Fastify's series, for a line that needs one whatever the level. */
  nextRequestId(): string;
  /** The `received` line and the request's id; undefined when access lines are off. */
  received(request: IncomingMessage): string | undefined;
  /** The access line of the answer given. */
  answered(
    request: IncomingMessage,
    reqId: string | undefined,
    startedAt: number,
    status: number,
  ): void;
}

export function createFrontLog(options: FrontLogOptions): FrontLog {
  // The level is fixed at start-up; Fastify's logger exists once the app is built.
  let logging:
    | { log: FastifyBaseLogger; access: FastifyBaseLogger; info: boolean; debug: boolean }
    | undefined;
  const logger = () => {
    if (logging === undefined) {
      const log = options.log();
      // The access line holds a request id, the method, a fixed path, the status, a time and
      // an address: nothing the redaction list censors can be in it. pino 10 runs the list's
      // wildcard paths (`*.password`…) over every key of every line all the same, a clone and
      // a parse of each path per key, the largest JavaScript cost of a logged read. This child
      // writes the same bytes without them; every other line keeps them.
      const access = log.child({}, { redact: { paths: [] } });
      logging = {
        log,
        access,
        info: levelEnabled(log, 'info'),
        debug: levelEnabled(log, 'debug'),
      };
    }
    return logging;
  };

  return {
    log: () => logger().log,
    nextRequestId: options.nextRequestId,
    received(request) {
      const { log, info, debug } = logger();
      if (!info) return undefined;
      const reqId = options.nextRequestId();
      if (debug) log.debug({ reqId, method: request.method, path: request.url }, 'received');
      return reqId;
    },
    answered(request, reqId, startedAt, status) {
      if (reqId === undefined) return;
      if (options.logsAnswer?.(request.method, status) === false) return;
      const ms = Math.round((performance.now() - startedAt) * 10) / 10;
      const ip = request.socket.remoteAddress;
      const method = request.method as string;
      const path = request.url as string;
      if (options.accessLine !== undefined) {
        options.accessLine(reqId, method, path, status, ms, ip);
        return;
      }
      logger().access.info({ reqId, method, path, status, ms, ip }, 'request');
    },
  };
}
