import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from '../../http/errors.js';
import type { Observer } from '../../observe/observer.js';
import type { WorkGate } from '../../traffic/work-gate.js';
import { clientGroup } from '../../traffic/client-group.js';

type Answer = Promise<FastifyReply> | FastifyReply;

export interface SignInDoorOptions {
  /** Sign-ins inside Auth.js at once, and how many may wait at the door (src/auth/register.ts). */
  gate: WorkGate;
  observer: Pick<Observer, 'signIn'>;
  /** Answers a sign-in we cannot take now (the busy page, or JSON). */
  refuse: (request: FastifyRequest, reply: FastifyReply, error: HttpError) => Answer;
}

/**
 * Sign-ins wait at the door, not inside Auth.js, and past the queue are refused before Auth.js
 * works on them (CSRF digest, config, throttle, database) with the answer the hash queue would
 * give. A burst arrives all at once, before any of it reaches the hash queue; admitted whole,
 * its pre-hash work would hold the event loop in one block that session reads and probes wait
 * behind. Fair between clients: waiters are let in round-robin by client address (IPv6 per
 * /64), and one address holds only a share of the queue.
 */
export function signInDoor(options: SignInDoorOptions) {
  return function enter(
    request: FastifyRequest,
    reply: FastifyReply,
    signIn: () => Answer,
  ): Answer {
    const overloaded = () =>
      options.refuse(request, reply, new HttpError('overloaded', { 'retry-after': '1' }));
    const admitted = options.gate.tryRun(
      async () =>
        // A client that gave up while waiting at the door costs no hash and no throttle
        // charge; it was not refused, so it is no sign-in outcome either.
        request.raw.socket.destroyed ? overloaded() : signIn(),
      clientGroup(request.ip),
    );
    if (admitted !== undefined) return admitted;
    options.observer.signIn('overloaded');
    return overloaded();
  };
}
