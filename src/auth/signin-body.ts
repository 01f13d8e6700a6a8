import { HttpError } from '../http/errors.js';

const stringFields = ['csrfToken', 'email', 'password', 'callbackUrl'] as const;
// Keys that only an attack sends; refusing them keeps any later merge from touching prototypes.
const forbiddenKeys = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Checks a POST body to /api/auth/* before Auth.js reads it (Auth.js reads the bytes itself):
 * JSON must be an object whose known fields are strings. Form bodies always yield strings;
 * with a repeated field the last value counts, as in Auth.js's `Object.fromEntries`.
 */
export function assertAuthBody(mediaType: string, body: Buffer): void {
  if (mediaType !== 'application/json') return;
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
