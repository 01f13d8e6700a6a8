import type { FastifyRequest } from 'fastify';
import { HttpError } from '../../http/errors.js';

/**
 * The route a request reached and its query, as a URL parser reads the target. Fastify routes
 * `/api/auth/%73ession` and `http://host/api/auth/session` (absolute-form) to the session route;
 * every check and Auth.js itself must see that route, not the raw target (Auth.js would read
 * `%73ession` as an unknown action, and an absolute-form target as a path after the origin).
 */
export function routeOf(request: FastifyRequest): { path: string; search: string } {
  const path = request.routeOptions.url;
  if (path === undefined) throw new HttpError('not_found');
  try {
    return { path, search: new URL(request.url, 'http://target.invalid').search };
  } catch {
    throw new HttpError('bad_request', {}, 'The request target is not a valid URL.');
  }
}

/**
 * The public origin: AUTH_URL's when set (it fixes redirects whatever Host says), else the
 * request's `Host` header with its scheme.
 */
export function originOf(request: FastifyRequest, publicOrigin: string | undefined): string {
  if (publicOrigin !== undefined) return publicOrigin;
  // Behind a trusted proxy the scheme is X-Forwarded-Proto's: any other word than these two
  // would make an opaque origin ("null") that no URL can be built on.
  const protocol = request.protocol as string;
  if (protocol !== 'http' && protocol !== 'https') {
    throw new HttpError('bad_request', {}, 'The forwarded protocol is not http or https.');
  }
  // The Host header itself, not Fastify's `request.host`: behind a trusted proxy that believes
  // X-Forwarded-Host, which the documented nginx block neither sets nor clears, so a client's
  // own value would pick the origin of redirects and cookies (docs/operations.md, Behind nginx).
  try {
    return new URL(`${protocol}://${request.headers.host ?? ''}`).origin;
  } catch {
    throw new HttpError('bad_request', {}, 'The Host header is not a valid host.');
  }
}

/** Whether the answer is for https (its cookie names and attributes differ). */
export function isSecure(request: FastifyRequest, publicOrigin: string | undefined): boolean {
  return request.protocol === 'https' || publicOrigin?.startsWith('https:') === true;
}
