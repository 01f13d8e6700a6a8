import type { FastifyRequest } from 'fastify';
import * as z from 'zod/mini';
import { HttpError, invalidField } from '../http/errors.js';

/**
 * A POST body to /api/account/*: a form or a JSON object (the parser refused other types with
 * 415, and bodies past the limit with 413), as a plain record. No body reads as an empty one.
 */
export function readBody(request: FastifyRequest): Record<string, unknown> {
  const raw = request.body instanceof Buffer ? request.body.toString('utf8') : '';
  const contentType = (request.headers['content-type'] ?? '').toLowerCase();
  if (raw.length === 0) return {};
  if (!contentType.includes('application/json')) {
    return Object.fromEntries(new URLSearchParams(raw));
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new HttpError('bad_request', {}, 'The JSON body could not be parsed.');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new HttpError('bad_request', {}, 'The JSON body must be an object.');
  }
  return parsed as Record<string, unknown>;
}

/** The fields a route takes, or 422 `invalid_field` naming the first one that is wrong. */
export function fieldsOf<T extends z.ZodMiniType>(schema: T, body: Record<string, unknown>) {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data as z.output<T>;
  const field = String(parsed.error.issues[0]?.path[0] ?? 'body');
  throw invalidField(field);
}

/** A string field of at most `max` UTF-16 units (bounded before any other work). */
export const boundedString = (max: number) => z.string().check(z.maxLength(max));
