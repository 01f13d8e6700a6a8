import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { createAccessLine } from '../../src/log/access-line.js';
import { loggerOptions } from '../../src/log/options.js';

/** Lines a stream was given, in order. */
function capture() {
  const lines: string[] = [];
  return { lines, stream: { write: (line: string) => lines.push(line) } };
}

// The hand-built line must be exactly what the service's pino (Fastify's, loggerOptions) writes: every
// field in the same order, the same escaping, the same time and base fields.
describe('the access line built by hand', () => {
  const cases: [string, string, string, number, number, string | undefined][] = [
    ['req-0', 'GET', '/api/auth/session', 200, 0.3, '127.0.0.1'],
    ['req-zz9', 'GET', '/api/auth/csrf', 200, 12, '::ffff:10.0.0.7'],
    ['req-1a', 'GET', '/api/auth/session', 503, 1234.5, '2001:db8::1'],
    ['req-2', 'GET', '/api/auth/session', 500, 0, undefined],
    ['req-"3"', 'GET', '/a\\b"c\u0001', 200, 7.1, '127.0.0.1'],
  ];

  it.each(cases)(
    '%s %s %s %s is byte for byte pino’s line',
    (reqId, method, path, status, ms, ip) => {
      const ours = capture();
      const theirs = capture();
      // The service's logger as the service makes it: Fastify's pino with loggerOptions.
      const log = Fastify({ logger: loggerOptions('info', theirs.stream) }).log;
      const frozen = Date.now();
      const realNow = Date.now;
      Date.now = () => frozen;
      try {
        createAccessLine(ours.stream)(reqId, method, path, status, ms, ip);
        log.info({ reqId, method, path, status, ms, ip }, 'request');
      } finally {
        Date.now = realNow;
      }
      expect(ours.lines).toHaveLength(1);
      expect(ours.lines[0]).toBe(theirs.lines[0]);
      expect(JSON.parse(ours.lines[0] as string)).toMatchObject({
        level: 30,
        reqId,
        status,
        msg: 'request',
      });
    },
  );
});
