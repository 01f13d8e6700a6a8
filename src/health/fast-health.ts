import type { IncomingMessage, ServerResponse } from 'node:http';
import { finishHead, jsonType, securityHead, writeAnswer } from '../http/answer.js';

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
  const security = securityHead(options.publicIsHttps);
  // Heads built once, as the route's answer is finished (src/http/answer.ts): Node writes a
  // flat array as it is. The timestamp is ASCII, so the length is fixed for a given ISO width.
  const headFor = (timestampLength: number, draining: boolean): string[] =>
    finishHead(['content-type', jsonType], security, false, draining, fixedBytes + timestampLength);
  const isoWidth = 24; // 2026-11-22T02:18:35.123Z; years past 9999 are wider
  const open = headFor(isoWidth, false);
  const closing = headFor(isoWidth, true);
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
    const head =
      timestamp.length === isoWidth
        ? draining
          ? closing
          : open
        : headFor(timestamp.length, draining);
    writeAnswer(response, 200, head, body);
    return true;
  };
}
