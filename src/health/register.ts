import type { Site } from '../http/site.js';
import type { Observer } from '../observe/observer.js';
import { createFastHealth } from './fast-health.js';
import { healthRoutes, registerHealthRoutes } from './routes.js';

export interface HealthRegistration {
  version: string;
  /** Resolves when the database answers (readiness). */
  pingDatabase(): Promise<void>;
  observer: Observer;
}

/** `/api/health` (liveness, answered in front of Fastify when it may be) and `/api/health/ready`. */
export function registerHealth(site: Site, deps: HealthRegistration): void {
  const { now, isDraining } = site;
  if (site.answersInFront) {
    site.addFront(
      createFastHealth({
        version: deps.version,
        now,
        isDraining,
        publicIsHttps: site.publicIsHttps,
      }),
    );
  }
  site.declareRoutes(healthRoutes);
  registerHealthRoutes(site.app, {
    version: deps.version,
    pingDatabase: deps.pingDatabase,
    now,
    isDraining,
    reportReadiness: deps.observer.readiness,
  });
}
