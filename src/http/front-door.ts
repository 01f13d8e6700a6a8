import http, { type IncomingMessage, type ServerResponse } from 'node:http';

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
}

/**
 * Fastify's `serverFactory`: the fronts first, in order (the list may grow until the server
 * listens), then Fastify; the same timeouts Fastify would set.
 */
export function serverWithFrontDoor(fronts: readonly Front[], timeouts: ServerTimeouts) {
  return (handler: http.RequestListener): http.Server => {
    const server = http.createServer(
      // Slow clients: headers must arrive within the request timeout, checked every second.
      { headersTimeout: timeouts.requestTimeoutMs, connectionsCheckingInterval: 1000 },
      (request, response) => {
        for (const front of fronts) if (front(request, response, handler)) return;
        handler(request, response);
      },
    );
    server.keepAliveTimeout = timeouts.keepAliveTimeoutMs;
    server.requestTimeout = timeouts.requestTimeoutMs;
    server.setTimeout(timeouts.connectionTimeoutMs);
    return server;
  };
}
