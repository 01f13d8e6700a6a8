import type { Observer } from './observer.js';
import { listenMetrics, type MetricsExposition, type MetricsServer } from './server.js';

export interface MetricsAddress {
  host: string;
  port: number;
}

type Log = { error(fields: object, message: string): void };

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
    throw new Error(`METRICS_PORT/METRICS_HOST ${address.host}:${address.port}: ${reason}`);
  }
}

/**
 * This process's metrics. In a cluster worker they are handed to the primary on request
 * (prom-client's cluster protocol), which serves the sum of its workers'. prom-client is loaded
 * only here, so a service without METRICS_PORT never loads it.
 */
export async function createProcessMetrics(role: 'process' | 'worker'): Promise<ProcessMetrics> {
  const [{ createPrometheusMetrics }, { AggregatorRegistry }] = await Promise.all([
    import('./prometheus.js'),
    import('prom-client'),
  ]);
  const { observer, registry } = createPrometheusMetrics();
  if (role === 'worker') {
    // Constructing one is what makes a worker answer its primary's requests.
    new AggregatorRegistry();
    AggregatorRegistry.setRegistries([registry]);
  }
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

/** In a cluster primary: the workers' metrics, summed (gauges too: the whole is what counts). */
export async function serveClusterMetrics(address: MetricsAddress, log: Log) {
  const { AggregatorRegistry } = await import('prom-client');
  const aggregator = new AggregatorRegistry();
  return listenNamed(
    {
      contentType: aggregator.contentType,
      render: async () => (await aggregator.clusterMetrics()) as string,
    },
    address,
    log,
  );
}
