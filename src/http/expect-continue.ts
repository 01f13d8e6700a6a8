import type { RequestListener } from 'node:http';

/**
 * The server's `checkContinue` listener: `100 Continue` only for a request answered next.
 *
 * Left to itself, Node writes the interim line as soon as it parses a request that expects it.
 * For a request pipelined behind another, whose answer waits its turn, that line is held with
 * the answer's output, and Node then puts the answer's head in front of it: the client reads
 * `100 Continue` in the middle of the answer, as body bytes. A waiting request needs no such
 * line (a client that pipelines has sent the body already; one that waits sends it after a
 * timeout), so only a request whose answer owns the connection gets it.
 */
export function continueWhenNext(listener: RequestListener): RequestListener {
  return (request, response) => {
    if (response.socket !== null) response.writeContinue();
    listener(request, response);
  };
}
