import type { FastifyRequest } from 'fastify';
import { HttpError } from '../../http/errors.js';

const stringFields = ['csrfToken', 'email', 'password', 'callbackUrl'] as const;
// Keys that only an attack sends; refusing them keeps any later merge from touching prototypes.
const forbiddenKeys = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * A POST body to /api/auth/*, checked before Auth.js reads it (Auth.js reads the bytes itself):
 * a form or JSON (415 otherwise), and JSON must be an object whose known fields are strings
 * (400 otherwise). Returns the body's bytes, empty when there were none.
 */
export function guardAuthBody(request: FastifyRequest): Buffer {
  const contentType = (request.headers['content-type'] ?? '').toLowerCase();
  const mediaType = contentType.split(';', 1)[0]?.trim();
  if (mediaType !== 'application/x-www-form-urlencoded' && mediaType !== 'application/json') {
    throw new HttpError('unsupported_media_type');
  }
  const body = request.body instanceof Buffer ? request.body : Buffer.alloc(0);
  // Auth.js reads the body as JSON when `application/json` appears anywhere in the header
  // (a parameter too), so that is how it is checked: no parameter smuggles a body past.
  if (contentType.includes('application/json')) assertJsonFields(body);
  return body;
}

/**
 * Form bodies always yield strings; with a repeated field the last value counts, as in
 * Auth.js's `Object.fromEntries`. JSON needs checking.
 */
function assertJsonFields(body: Buffer): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw new HttpError('bad_request', {}, 'The JSON body could not be parsed.');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new HttpError('bad_request', {}, 'The JSON body must be an object.');
  }
  for (const key of Object.keys(parsed)) {
    if (forbiddenKeys.has(key))
      throw new HttpError('bad_request', {}, `Field ${key} is not allowed.`);
  }
  for (const name of stringFields) {
    const value = (parsed as Record<string, unknown>)[name];
    if (value !== undefined && typeof value !== 'string') {
      throw new HttpError('bad_request', {}, `Field ${name} must be a string.`);
    }
  }
}
