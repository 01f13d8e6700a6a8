import type { FastifyRequest } from 'fastify';

/** The request's query string, `?` included (empty when there is none). */
export function queryOf(url: string): string {
  const at = url.indexOf('?');
  return at === -1 ? '' : url.slice(at);
}

/** Auth.js reads fields and query parameters through `Object.fromEntries`: the last one counts. */
export function lastValue(params: URLSearchParams, name: string): string | undefined {
  const value = params.getAll(name).at(-1);
  return value === '' ? undefined : value;
}

/**
 * A browser submitting one of the pages' forms: a form post that asks for HTML. Auth.js clients
 * send `X-Auth-Return-Redirect` and read JSON, so they keep today's JSON answer.
 */
export function isBrowserFormPost(request: FastifyRequest): boolean {
  if (request.headers['x-auth-return-redirect'] !== undefined) return false;
  const mediaType = (request.headers['content-type'] ?? '').split(';', 1)[0]?.trim().toLowerCase();
  const accept = (request.headers.accept ?? '').toLowerCase();
  return mediaType === 'application/x-www-form-urlencoded' && accept.includes('text/html');
}

/** A field of the form post, as Auth.js reads it (the last of its name; empty is absent). */
export function postedField(request: FastifyRequest, name: string): string | undefined {
  if (!(request.body instanceof Buffer)) return undefined;
  return lastValue(new URLSearchParams(request.body.toString('utf8')), name);
}
