import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface PipelineLimits {
  /** Requests one connection may have in progress or answered but not yet sent. */
  perConnection: number;
  /** Requests beyond each connection's first that the whole process may hold at once. */
  pipelinedMax: number;
  /** Answer bytes waiting in a connection's buffer past which it is sent no more. */
  unsentBytesMax: number;
}

export const defaultPipelineLimits: PipelineLimits = {
  perConnection: 16,
  pipelinedMax: 256,
  unsentBytesMax: 64 * 1024,
};

interface Held {
  /** Requests admitted whose answers have not been handed to the kernel yet. */
  inProgress: number;
  /** Of those, the ones admitted while another was in progress (counted in `pipelinedMax`). */
  pipelined: number;
  /** Past its limit: destroyed, and what Node still parsed from the same read is ignored. */
  overrun: boolean;
  closed: boolean;
}

/**
 * Destroys a connection past its limit without a stack trace per request it left. When it
 * closes, Node aborts every request it parsed and has not answered (all of one 64 KB read:
 * ~1,200 small GETs), each with a `ConnResetException` whose stack it captures and formats at
 * once (streams' destroy reads `err.stack`): measured, over 40 % of the CPU a flood of such
 * connections cost, all in the turn of each close, while every other client waited. Those
 * errors go to nobody (the requests were never handed to a handler), so inside Node's close
 * handler they are made with no stack frames.
 */
function destroyQuietly(socket: Socket): void {
  let limit: number | undefined;
  // Before Node's own 'close' listener (socketOnClose, where it aborts them), then after it.
  socket.prependOnceListener('close', () => {
    limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
  });
  socket.once('close', () => {
    if (limit !== undefined) Error.stackTraceLimit = limit;
  });
  socket.destroy();
}

/**
 * Bounds what a connection can make the process hold. Node parses every pipelined request in a
 * chunk it reads (64 KB: ~1,200 small GETs) and hands each over at once, whether or not the
 * client reads the answers; finished answers wait in memory behind the first unread one. Here a
 * request is admitted only while its connection has fewer than `perConnection` in progress or
 * unsent, its unsent bytes are within budget, and (past its first) the process holds fewer than
 * `pipelinedMax` pipelined requests. At a request past that the connection is destroyed, with
 * the answers it has not taken: waiting for it to take them would keep every request Node
 * parsed from that read alive meanwhile (~3 MB per 64 KB), so memory would grow with the
 * number of such connections instead of with one read. HTTP lets a server close a connection
 * between requests; a client that reads its answers, or pipelines a few, never meets the limit.
 */
export function limitPipelining(limits: PipelineLimits) {
  const held = new WeakMap<Socket, Held>();
  let pipelined = 0;

  const stateOf = (socket: Socket): Held => {
    let state = held.get(socket);
    if (state === undefined) {
      const created: Held = { inProgress: 0, pipelined: 0, overrun: false, closed: false };
      held.set(socket, created);
      // Answers queued behind an unsent one get no 'close' of their own when the socket goes.
      socket.once('close', () => {
        created.closed = true;
        pipelined -= created.pipelined;
      });
      state = created;
    }
    return state;
  };

  return {
    /**
     * Whether to answer this request: `first` when nothing else of its connection is in
     * progress, `pipelined` when it waits behind another; false: it is past the limit, and its
     * connection gone.
     */
    admit(request: IncomingMessage, response: ServerResponse): 'first' | 'pipelined' | false {
      const socket = request.socket;
      const state = stateOf(socket);
      if (state.overrun) return false;
      const isPipelined = state.inProgress > 0;
      if (
        state.inProgress >= limits.perConnection ||
        socket.writableLength > limits.unsentBytesMax ||
        (isPipelined && pipelined >= limits.pipelinedMax)
      ) {
        state.overrun = true;
        destroyQuietly(socket);
        return false;
      }
      state.inProgress += 1;
      if (isPipelined) {
        state.pipelined += 1;
        pipelined += 1;
      }
      response.once('close', () => {
        if (state.closed) return;
        state.inProgress -= 1;
        if (isPipelined) {
          state.pipelined -= 1;
          pipelined -= 1;
        }
      });
      return isPipelined ? 'pipelined' : 'first';
    },
    /** No request in progress and nothing unsent: the connection may give way to a new one. */
    isIdle(socket: Socket): boolean {
      return (held.get(socket)?.inProgress ?? 0) === 0 && socket.writableLength === 0;
    },
  };
}
