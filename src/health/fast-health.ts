import type { IncomingMessage, ServerResponse } from 'node:http';
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
 * The answer is the one the Fastify route gives, header for header (test/health/health-in-front.test.ts);
 * anything else (HEAD, a query string) takes the normal route. Probes are not access-logged.
 */
export function createFastHealth(options: FastHealthOptions) {
  const prefix = `{"status":"ok","timestamp":"`;
  const suffix = `","version":${JSON.stringify(options.version)}}`;
  const fixedBytes = Buffer.byteLength(prefix + suffix);
  // Flat [name, value, …] arrays built once: Node writes them as they are, with no per-request
  // object to spread. The timestamp is ASCII, so the length is fixed for a given ISO width.
  const headersFor = (timestampLength: number, close: boolean): string[] => [
    'content-type',
    'application/json; charset=utf-8',
    ...Object.entries(jsonSecurityHeaders(options.publicIsHttps)).flat(),
    'cache-control',
    'no-store',
    'content-length',
    String(fixedBytes + timestampLength),
    ...(close ? ['connection', 'close'] : []),
  ];
  const isoWidth = 24; // 2026-11-22T02:18:35.123Z; years past 9999 are wider
  const open = headersFor(isoWidth, false);
  const closing = headersFor(isoWidth, true);
  // Probes within one millisecond share the body: the timestamp would be the same.
  let bodyMs = Number.NaN;
  let timestamp = '';
  let body = '';
  return function answer(request: IncomingMessage, response: ServerResponse): boolean {
    if (request.method !== 'GET' || request.url !== '/api/health') return false;
    const ms = options.now();
    if (ms !== bodyMs) {
      bodyMs = ms;
      timestamp = new Date(ms).toISOString();
      body = `${prefix}${timestamp}${suffix}`;
    }
    const draining = options.isDraining();
    const headers =
      timestamp.length === isoWidth
        ? draining
          ? closing
          : open
        : headersFor(timestamp.length, draining);
    response.writeHead(200, headers);
    response.end(body);
    return true;
  };
}
