import type http from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { continueWhenNext } from './expect-continue.js';
import { guardedServer, type ListenerProtections } from './listener-guard.js';
import type { Admission } from './request-budget-door.js';

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

/**
 * A connection accepted just before the drain began has its request on the way: it gets this
 * long to send it (and is answered, with `Connection: close`) before it is ended.
 */
export const unstartedGraceMs = 1000;

/**
 * Fastify's `serverFactory` (`factory`): the fronts first, in order (the list may grow until
 * the server listens), then Fastify, on a server with every listener's protections
 * (src/http/listener-guard.ts).
 *
 * With an `admission` (the request budget, src/http/request-budget-door.ts), a request is
 * charged before any front sees it, and again before Fastify does: a refused one is answered
 * there and goes no further.
 *
 * `closeUnstarted` ends, after `unstartedGraceMs`, the connections that have still not sent a
 * request, for a drain: Node's `closeIdleConnections` passes them over (a browser's
 * speculative pre-connect is one), so they would hold `server.close()` open until their
 * socket timeout.
 */
export function serverWithFrontDoor(
  fronts: readonly Front[],
  protections: ListenerProtections,
  admission?: Admission,
) {
  const unstarted = new Set<Socket>();
  const factory = (handler: http.RequestListener): http.Server => {
    const toFastify: http.RequestListener =
      admission === undefined
        ? handler
        : (request, response) => {
            if (admission.toFastify(request, response)) handler(request, response);
          };
    const { server, listener } = guardedServer(protections, (request, response) => {
      unstarted.delete(request.socket);
      if (admission !== undefined && !admission.arrive(request, response)) return;
      for (const front of fronts) if (front(request, response, toFastify)) return;
      toFastify(request, response);
    });
    server.on('checkContinue', continueWhenNext(listener));
    // An expectation other than 100-continue is ignored and the request answered as usual, as
    // RFC 9110 (10.1.1) allows and nginx does: Node's own 417 had no body, no security headers
    // and no access line.
    server.on('checkExpectation', listener);
    server.on('connection', (socket: Socket) => {
      unstarted.add(socket);
      socket.once('close', () => unstarted.delete(socket));
    });
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
