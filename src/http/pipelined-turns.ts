import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

interface Waiting {
  request: IncomingMessage;
  response: ServerResponse;
  handler: RequestListener;
}

/**
 * A connection's pipelined requests handled one per turn of the event loop, its others waiting
 * for later turns. Node parses every request in a read (64 KB: ~1,200 small GETs) and hands each
 * over at once; handled then and there, one connection's read held the loop for all of them,
 * and a few such connections kept every other client waiting (a health probe: 2 s on a slower
 * machine). A connection's first request, the only one a client that does not pipeline ever
 * has in flight, is handled at once as before. The answers still go out in the order asked
 * (Node queues a connection's answers behind its first unsent one).
 */
export function pipelinedTurns() {
  let waiting: Waiting[] = [];

  const handleTurn = () => {
    const now = waiting;
    waiting = [];
    const handled = new Set<Socket>();
    for (const next of now) {
      const { request, response, handler } = next;
      // Its connection was closed meanwhile (past its limit, or by the client): nobody to answer.
      if (response.destroyed || request.socket.destroyed) continue;
      if (handled.has(request.socket)) {
        waiting.push(next);
        continue;
      }
      handled.add(request.socket);
      handler(request, response);
    }
    if (waiting.length > 0) setImmediate(handleTurn);
  };

  return {
    /** Handles `request` in a later turn, after its connection's earlier ones. */
    later(request: IncomingMessage, response: ServerResponse, handler: RequestListener): void {
      waiting.push({ request, response, handler });
      if (waiting.length === 1) setImmediate(handleTurn);
    },
  };
}
