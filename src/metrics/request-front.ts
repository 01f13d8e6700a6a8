import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Front } from '../http/front-door.js';

type Record = (route: string, method: string, status: number, seconds: number) => void;

const startedAt = Symbol('gatehouse.requestStartedAt');
type Timed = ServerResponse<IncomingMessage> & { [startedAt]?: number };

const methods = new Set(['GET', 'HEAD', 'POST']);

/**
 * A front that answers nothing: it notes when each request arrived and records it when its
 * answer is sent, so requests answered in front of Fastify count like the rest. One shared
 * listener (`this` is the response) instead of a closure per request. Requests Node answers
 * itself (a malformed request's 400, CONNECT) never reach a front and are not counted.
 */
export function createRequestFront(record: Record, hasRoute: (path: string) => boolean): Front {
  function finished(this: Timed): void {
    const started = this[startedAt] ?? performance.now();
    const request = this.req;
    const target = request.url ?? '';
    const query = target.indexOf('?');
    const path = query === -1 ? target : target.slice(0, query);
    const method = request.method ?? '';
    record(
      hasRoute(path) ? path : 'other',
      methods.has(method) ? method : 'other',
      this.statusCode,
      (performance.now() - started) / 1000,
    );
  }
  return (_request, response: Timed) => {
    response[startedAt] = performance.now();
    // `on`, not `once` (which wraps the listener per call): a response finishes only once.
    response.on('finish', finished);
    return false;
  };
}
