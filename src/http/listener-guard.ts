import http from 'node:http';
import type { Socket } from 'node:net';
import { limitConnections, type ConnectionLimits } from './connection-limits.js';
import { defaultPipelineLimits, limitPipelining } from './pipeline-limit.js';
import { pipelinedTurns } from './pipelined-turns.js';

/** What every listener of the service sets against clients that hold what they do not use. */
export interface ListenerProtections {
  requestTimeoutMs: number;
  connectionTimeoutMs: number;
  keepAliveTimeoutMs: number;
  /** Caps on open connections, with the warning to log while they bite. */
  connections?: {
    limits: ConnectionLimits;
    warn: (details: Record<string, unknown>, message: string) => void;
  };
}

/**
 * An HTTP server with the protections the public site has, for the public and the metrics
 * listeners alike: headers and whole requests within the request timeout (checked every
 * second), a connection that sends nothing closed after it too, idle keep-alive closed, open connections capped
 * (src/http/connection-limits.ts), what one connection may have in progress or unsent
 * bounded (src/http/pipeline-limit.ts), and its pipelined requests handled one per turn of the
 * loop (src/http/pipelined-turns.ts). `listener` is the request handler behind that bound:
 * give it to any other request event too (`checkContinue`).
 */
export function guardedServer(protections: ListenerProtections, handler: http.RequestListener) {
  const pipelining = limitPipelining(defaultPipelineLimits);
  const turns = pipelinedTurns();
  const listener: http.RequestListener = (request, response) => {
    const admitted = pipelining.admit(request, response);
    if (admitted === 'first') handler(request, response);
    else if (admitted === 'pipelined') turns.later(request, response, handler);
  };
  const server = http.createServer(
    { headersTimeout: protections.requestTimeoutMs, connectionsCheckingInterval: 1000 },
    listener,
  );
  if (protections.connections !== undefined) {
    const { limits, warn } = protections.connections;
    limitConnections(server, limits, warn, pipelining.isIdle);
  }
  // Node's header timeout starts with the first byte (and then answers 408): a connection that
  // sends none would be held until the socket timeout (Node's default: none at all).
  server.on('connection', (socket: Socket) => {
    const silent = setTimeout(() => {
      if (socket.bytesRead === 0) socket.destroy();
    }, protections.requestTimeoutMs);
    silent.unref();
    socket.once('close', () => clearTimeout(silent));
  });
  server.keepAliveTimeout = protections.keepAliveTimeoutMs;
  server.requestTimeout = protections.requestTimeoutMs;
  server.setTimeout(protections.connectionTimeoutMs);
  return { server, listener };
}
