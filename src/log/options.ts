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

/** Where pino writes lines: the service's LineWriter, or pino's own blocking stdout if omitted. */
export interface LogStream {
  write(line: string): unknown;
}

export function loggerOptions(level: string, stream?: LogStream): FastifyServerOptions['logger'] {
  return {
    level,
    redact: { paths: redactedPaths, censor: '[redacted]' },
    ...(stream !== undefined && { stream }),
  };
}
