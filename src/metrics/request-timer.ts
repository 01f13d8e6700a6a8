import diagnostics from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Front } from '../http/front-door.js';

type Record = (path: string, method: string, status: number, seconds: number) => void;

interface Finished {
  request: IncomingMessage;
  response: ServerResponse;
}

/**
 * Times every request the site answers: a front that answers nothing notes when each request
 * arrived, and Node's `http.server.response.finish` diagnostics channel says when its answer
 * went out, in front of Fastify or from it. A channel rather than a `finish` listener per
 * response: adding and emitting one was about a third of the metrics' cost on a session read
 * (CPU profile). The arrival time is kept under a symbol of this timer's own, so only
 * requests this site took are recorded (other servers in the process publish there too).
 * Requests Node answers itself (a malformed request's 400, CONNECT) reach no front and are not
 * counted.
 */
export function createRequestTimer(record: Record): { front: Front; stop(): void } {
  const arrivedAt = Symbol('gatehouse.arrivedAt');
  type Timed = ServerResponse & { [arrivedAt]?: number };
  const finished = (message: unknown) => {
    const { request, response } = message as Finished;
    const arrived = (response as Timed)[arrivedAt];
    if (arrived === undefined) return;
    const target = request.url ?? '';
    const query = target.indexOf('?');
    record(
      query === -1 ? target : target.slice(0, query),
      request.method ?? '',
      response.statusCode,
      (performance.now() - arrived) / 1000,
    );
  };
  diagnostics.subscribe('http.server.response.finish', finished);
  return {
    front: (_request, response: Timed) => {
      response[arrivedAt] = performance.now();
      return false;
    },
    stop: () => diagnostics.unsubscribe('http.server.response.finish', finished),
  };
}
