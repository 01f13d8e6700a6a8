import type { FastifyInstance } from 'fastify';
import { sendError } from '../http/error-handler.js';
import { storeUnavailable } from '../http/answer.js';

export interface HealthDeps {
  version: string;
  /** Resolves when the database answers; the route gives it `readyTimeoutMs`. */
  pingDatabase(): Promise<void>;
  isDraining(): boolean;
  now: () => number;
  /** Told each readiness answer (metrics). */
  reportReadiness?(ready: boolean): void;
}

export const readyTimeoutMs = 1000;

export const healthRoutes: Record<string, readonly string[]> = {
  '/api/health': ['GET', 'HEAD'],
  '/api/health/ready': ['GET', 'HEAD'],
};

function withTimeout(work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** Liveness never touches the database; readiness does, with a deadline. */
export function registerHealthRoutes(app: FastifyInstance, deps: HealthDeps): void {
  app.get('/api/health', (_request, reply) => {
    return reply.send({
      status: 'ok',
      timestamp: new Date(deps.now()).toISOString(),
      version: deps.version,
    });
  });

  app.get('/api/health/ready', async (request, reply) => {
    if (deps.isDraining()) {
      deps.reportReadiness?.(false);
      return sendError(reply, storeUnavailable('The service is shutting down.'));
    }
    try {
      await withTimeout(deps.pingDatabase(), readyTimeoutMs);
      deps.reportReadiness?.(true);
      return reply.send({ status: 'ready' });
    } catch (error) {
      deps.reportReadiness?.(false);
      request.log.warn({ err: error }, 'readiness check failed');
      return sendError(reply, storeUnavailable());
    }
  });
}
