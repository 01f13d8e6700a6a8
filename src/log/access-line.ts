import os from 'node:os';
import type { LogStream } from './options.js';

/**
 * Writes one access line: `reqId`, `method`, `path`, `status`, `ms`, `ip` and the message
 * `request`, at info.
 */
export type AccessLine = (
  reqId: string,
  method: string,
  path: string,
  status: number,
  ms: number,
  ip: string | undefined,
) => void;

/**
 * The access line of a read answered in front of Fastify, built by hand: the same bytes pino
 * writes for `log.info({reqId, method, path, status, ms, ip}, 'request')` with `loggerOptions`
 * (level number, epoch time, pid and hostname, fields in that order, `msg` last; pinned by
 * test/log/access-line.test.ts), written to the same stream. Why by hand: per read, pino's
 * call was 3-4 µs of the main thread's 70 in the session-read benchmark, this about 1 µs
 * (docs/performance.md, "The access line"). Only these fields, none of which the redaction list
 * censors: every other line still goes through pino.
 */
export function createAccessLine(stream: LogStream): AccessLine {
  const head = `{"level":30,"time":`;
  const base = `,"pid":${process.pid},"hostname":${JSON.stringify(os.hostname())},"reqId":`;
  return (reqId, method, path, status, ms, ip) => {
    // pino leaves out a field whose value is undefined.
    const address = ip === undefined ? '' : `,"ip":${JSON.stringify(ip)}`;
    stream.write(
      `${head}${Date.now()}${base}${JSON.stringify(reqId)},"method":${JSON.stringify(method)},"path":${JSON.stringify(path)},"status":${status},"ms":${ms}${address},"msg":"request"}\n`,
    );
  };
}
