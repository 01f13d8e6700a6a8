import type { FastifyServerOptions } from 'fastify';

/** Anything that could carry a password, a cookie or a token is censored before it is written. */
export const redactedPaths = [
  'password',
  '*.password',
  'req.headers.cookie',
  'req.headers.authorization',
  'res.headers["set-cookie"]',
  'headers.cookie',
  'headers.authorization',
  'cookie',
  'token',
  '*.token',
  'secret',
  '*.secret',
];

export function loggerOptions(level: string): FastifyServerOptions['logger'] {
  return {
    level,
    redact: { paths: redactedPaths, censor: '[redacted]' },
  };
}
