import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { limitConnections, type ConnectionLimits } from './connection-limits.js';
import { continueWhenNext } from './expect-continue.js';

/**
 * A request answered in front of Fastify. Returns false to leave it to Fastify at once; true
 * once it has taken it, after which it either answers or calls `fallback(request, response)`
 * (Fastify), never both.
 */
export type Front = (
  request: IncomingMessage,
  response: ServerResponse,
  fallback: http.RequestListener,
) => boolean;

export interface ServerTimeouts {
  requestTimeoutMs: number;
  connectionTimeoutMs: number;
  keepAliveTimeoutMs: number;
  /** Caps on open connections, with the warning to log while they bite. */
  connections?: {
    limits: ConnectionLimits;
    warn: (details: Record<string, unknown>, message: string) => void;
  };
}

/**
 * A connection accepted just before the drain began has its request on the way: it gets this
 * long to send it (and is answered, with `Connection: close`) before it is ended.
 */
export const unstartedGraceMs = 1000;

/**
 * Fastify's `serverFactory` (`factory`): the fronts first, in order (the list may grow until
 * the server listens), then Fastify; the same timeouts Fastify would set.
 *
 * `closeUnstarted` ends, after `unstartedGraceMs`, the connections that have still not sent a
 * request, for a drain: Node's `closeIdleConnections` passes them over (a browser's
 * speculative pre-connect is one), so they would hold `server.close()` open until their
 * socket timeout.
 */
export function serverWithFrontDoor(fronts: readonly Front[], timeouts: ServerTimeouts) {
  const unstarted = new Set<Socket>();
  const factory = (handler: http.RequestListener): http.Server => {
    const listener: http.RequestListener = (request, response) => {
      unstarted.delete(request.socket);
      for (const front of fronts) if (front(request, response, handler)) return;
      handler(request, response);
    };
    const server = http.createServer(
      // Slow clients: headers must arrive within the request timeout, checked every second.
      { headersTimeout: timeouts.requestTimeoutMs, connectionsCheckingInterval: 1000 },
      listener,
    );
    server.on('checkContinue', continueWhenNext(listener));
    // An expectation other than 100-continue is ignored and the request answered as usual, as
    // RFC 9110 (10.1.1) allows and nginx does: Node's own 417 had no body, no security headers
    // and no access line.
    server.on('checkExpectation', listener);
    server.on('connection', (socket: Socket) => {
      unstarted.add(socket);
      socket.once('close', () => unstarted.delete(socket));
    });
    if (timeouts.connections !== undefined) {
      limitConnections(server, timeouts.connections.limits, timeouts.connections.warn);
    }
    server.keepAliveTimeout = timeouts.keepAliveTimeoutMs;
    server.requestTimeout = timeouts.requestTimeoutMs;
    server.setTimeout(timeouts.connectionTimeoutMs);
    return server;
  };
  const closeUnstarted = () => {
    const timer = setTimeout(() => {
      for (const socket of unstarted) socket.destroy();
      unstarted.clear();
    }, unstartedGraceMs);
    timer.unref();
  };
  return { factory, closeUnstarted };
}
