import http, { type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import { jsonSecurityHeaders } from '../http/security-headers.js';

export interface FastHealthOptions {
  version: string;
  now: () => number;
  isDraining: () => boolean;
  /** HSTS on every answer (AUTH_URL is https). */
  publicIsHttps: boolean;
}

/**
 * `GET /api/health` answered before Fastify's routing and hooks: a liveness probe is the most
 * frequent request a platform sends, and here it costs a fraction of a framework round trip.
 * The answer is the one the Fastify route gives, header for header (test/fast-health.test.ts);
 * anything else (HEAD, a query string) takes the normal route. Probes are not access-logged.
 */
export function createFastHealth(options: FastHealthOptions) {
  const prefix = `{"status":"ok","timestamp":"`;
  const suffix = `","version":${JSON.stringify(options.version)}}`;
  const base = {
    'content-type': 'application/json; charset=utf-8',
    ...jsonSecurityHeaders(options.publicIsHttps),
    'cache-control': 'no-store',
  };
  return function answer(request: IncomingMessage, response: ServerResponse): boolean {
    if (request.method !== 'GET' || request.url !== '/api/health') return false;
    const body = `${prefix}${new Date(options.now()).toISOString()}${suffix}`;
    const headers: http.OutgoingHttpHeaders = {
      ...base,
      'content-length': Buffer.byteLength(body),
    };
    if (options.isDraining()) headers.connection = 'close';
    response.writeHead(200, headers);
    response.end(body);
    return true;
  };
}

export interface ServerTimeouts {
  requestTimeoutMs: number;
  connectionTimeoutMs: number;
  keepAliveTimeoutMs: number;
}

/** Fastify's `serverFactory`: the health fast path in front, the same timeouts Fastify sets. */
export function serverWithFastHealth(
  fastHealth: (request: IncomingMessage, response: ServerResponse) => boolean,
  timeouts: ServerTimeouts,
) {
  return (handler: RequestListener): http.Server => {
    const server = http.createServer(
      // Slow clients: headers must arrive within the request timeout, checked every second.
      { headersTimeout: timeouts.requestTimeoutMs, connectionsCheckingInterval: 1000 },
      (request, response) => {
        if (!fastHealth(request, response)) handler(request, response);
      },
    );
    server.keepAliveTimeout = timeouts.keepAliveTimeoutMs;
    server.requestTimeout = timeouts.requestTimeoutMs;
    server.setTimeout(timeouts.connectionTimeoutMs);
    return server;
  };
}
