import type { Observer } from '../observe/observer.js';
import { listenMetrics, type MetricsExposition, type MetricsServer } from './server.js';

export interface MetricsAddress {
  host: string;
  port: number;
  /** REQUEST_TIMEOUT_MS: the metrics listener times requests as the public one does. */
  requestTimeoutMs?: number;
}

type Log = {
  error(fields: object, message: string): void;
  warn?(fields: object, message: string): void;
};

export interface ProcessMetrics {
  observer: Observer;
  /** Serves them on their own listener; a cluster worker's are served by its primary instead. */
  listen(address: MetricsAddress, log: Log): Promise<MetricsServer | undefined>;
}

/** The listener, with a failure to bind named after the variable that chose the port. */
async function listenNamed(exposition: MetricsExposition, address: MetricsAddress, log: Log) {
  try {
    return await listenMetrics(exposition, address, log);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`METRICS_PORT/METRICS_HOST ${address.host}:${address.port}: ${reason}`, {
      cause: error,
    });
  }
}

/**
 * This process's metrics. A cluster worker hands them to its primary on request
 * (src/metrics/cluster.ts), which serves them all. prom-client is imported only here: a
 * service without METRICS_PORT never runs it (the bundle still carries it).
 */
export async function createProcessMetrics(role: 'process' | 'worker'): Promise<ProcessMetrics> {
  const [{ createPrometheusMetrics }, { answerPrimary }] = await Promise.all([
    import('./prometheus.js'),
    import('./cluster.js'),
  ]);
  const { observer, registry } = createPrometheusMetrics();
  if (role === 'worker') answerPrimary(registry);
  return {
    observer,
    listen: async (address, log) =>
      role === 'worker'
        ? undefined
        : listenNamed(
            { contentType: registry.contentType, render: () => registry.metrics() },
            address,
            log,
          ),
  };
}

/** In a cluster primary: every worker's metrics, each series labelled with its `worker` slot. */
export async function serveClusterMetrics(address: MetricsAddress, log: Log) {
  const [{ gatherWorkers, trackListeningWorkers }, { Registry }] = await Promise.all([
    import('./cluster.js'),
    import('prom-client'),
  ]);
  trackListeningWorkers();
  return listenNamed(
    { contentType: Registry.PROMETHEUS_CONTENT_TYPE, render: gatherWorkers },
    address,
    log,
  );
}
