import type { Site } from '../http/site.js';
import type { Observer } from '../observe/observer.js';

/**
 * Times every request the site answers, in front of Fastify or by it, when metrics are on; the
 * rest of what is observed is reported by the capabilities themselves. Served on a listener of
 * its own (src/metrics/server.ts), never on the public port.
 */
export function registerMetrics(site: Site, observer: Observer): void {
  if (observer.timeRequests === undefined) return;
  const timer = observer.timeRequests(site.hasRoute);
  site.addFront(timer.front);
  site.app.addHook('onClose', (_instance, done) => {
    timer.stop();
    done();
  });
}
