import cluster from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';

/** One metric as a registry's `getMetricsAsJSON()` gives it. */
type MetricJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>[number];

const request = 'gatehouse:metrics-request';
const answer = 'gatehouse:metrics-answer';
/** A worker that has not answered by then is left out of this scrape. */
const workerAnswerMs = 2000;

interface Answer {
  type: typeof answer;
  id: number;
  metrics?: MetricJson[];
}

/**
 * In a worker: answers its primary's requests with this registry's metrics, each series
 * labelled with the worker's slot (GATEHOUSE_WORKER_SLOT, kept across restarts).
 */
export function answerPrimary(registry: Registry): void {
  registry.setDefaultLabels({
    worker: process.env.GATEHOUSE_WORKER_SLOT ?? String(cluster.worker?.id),
  });
  process.on('message', (message: { type?: unknown; id?: unknown }) => {
    if (message.type !== request || typeof message.id !== 'number') return;
    const id = message.id;
    registry.getMetricsAsJSON().then(
      (metrics) => process.send?.({ type: answer, id, metrics } satisfies Answer),
      () => process.send?.({ type: answer, id } satisfies Answer),
    );
  });
}

let nextId = 0;

/**
 * In the primary: every listening worker's metrics, merged into one exposition. Written by hand
 * rather than prom-client's `clusterMetrics()`: that one asks every forked worker, so a scrape
 * during a worker's start or restart waits 5 s and fails whole; here a worker that is not
 * listening yet, or does not answer within 2 s, is left out of that scrape only.
 */
export async function gatherWorkers(): Promise<string> {
  const id = nextId++;
  const workers = Object.values(cluster.workers ?? {}).filter(
    (worker) => worker !== undefined && worker.isConnected() && listening.has(worker.id),
  );
  const answers = await Promise.all(
    workers.map(
      (worker) =>
        new Promise<MetricJson[] | undefined>((resolve) => {
          const done = (metrics: MetricJson[] | undefined) => {
            clearTimeout(timer);
            worker!.off('message', onMessage);
            resolve(metrics);
          };
          const onMessage = (message: Partial<Answer>) => {
            if (message.type === answer && message.id === id) done(message.metrics);
          };
          const timer = setTimeout(() => done(undefined), workerAnswerMs);
          worker!.on('message', onMessage);
          worker!.send({ type: request, id }, (error: Error | null) => {
            // The worker went away between the listing and the send.
            if (error !== null) done(undefined);
          });
        }),
    ),
  );
  const got = answers.filter((metrics): metrics is MetricJson[] => metrics !== undefined);
  return AggregatorRegistry.aggregate(got).metrics();
}

const listening = new Set<number>();

/** Workers count once they listen: before that they have no metrics to give. */
export function trackListeningWorkers(): void {
  cluster.on('listening', (worker) => listening.add(worker.id));
  cluster.on('exit', (worker) => listening.delete(worker.id));
}
