/** Upper bounds in seconds: a session read takes well under a millisecond, a sign-in ~50-500 ms. */
export const requestBucketsSeconds = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
] as const;

const name = 'gatehouse_http_request_duration_seconds';
const help = 'HTTP requests by route (or "other"), method and status, and how long each took.';
const methods = new Set(['GET', 'HEAD', 'POST']);

interface Series {
  method: string;
  status: number;
  /** Observations per bucket, not cumulative; the last slot is above every bound. */
  counts: Float64Array;
  sum: number;
  count: number;
}

interface MetricValue {
  labels: Record<string, string | number>;
  value: number;
  metricName: string;
}

/**
 * `gatehouse_http_request_duration_seconds{route,method,status}`, in the shape prom-client's
 * registry renders (`get()`). Written by hand because it is on every request's path:
 * prom-client's `Histogram.observe` validates and hashes its label object on each call. Here a
 * request costs one Map lookup of its path (no string is built) and a scan of that route's few
 * method-and-status series. Paths that are no route count as `route="other"`, so a client
 * cannot make series without end.
 */
export function createRequestHistogram(hasRoute: (path: string) => boolean) {
  const byRoute = new Map<string, Series[]>();
  const other: Series[] = [];
  const bucketCount = requestBucketsSeconds.length;

  function observe(path: string, rawMethod: string, status: number, seconds: number): void {
    let series = byRoute.get(path);
    if (series === undefined) {
      if (hasRoute(path)) byRoute.set(path, (series = []));
      else series = other;
    }
    const method = methods.has(rawMethod) ? rawMethod : 'other';
    let entry: Series | undefined;
    for (const candidate of series) {
      if (candidate.status === status && candidate.method === method) {
        entry = candidate;
        break;
      }
    }
    if (entry === undefined) {
      entry = { method, status, counts: new Float64Array(bucketCount + 1), sum: 0, count: 0 };
      series.push(entry);
    }
    let bucket = 0;
    while (bucket < bucketCount && seconds > requestBucketsSeconds[bucket]!) bucket += 1;
    entry.counts[bucket]! += 1;
    entry.sum += seconds;
    entry.count += 1;
  }

  function values(): MetricValue[] {
    const out: MetricValue[] = [];
    const routes: [string, Series[]][] = [...byRoute, ['other', other]];
    for (const [route, series] of routes) {
      for (const { method, status, counts, sum, count } of series) {
        const labels = { route, method, status: String(status) };
        let cumulative = 0;
        requestBucketsSeconds.forEach((le, index) => {
          cumulative += counts[index]!;
          out.push({ labels: { ...labels, le }, value: cumulative, metricName: `${name}_bucket` });
        });
        out.push({ labels: { ...labels, le: '+Inf' }, value: count, metricName: `${name}_bucket` });
        out.push({ labels, value: sum, metricName: `${name}_sum` });
        out.push({ labels, value: count, metricName: `${name}_count` });
      }
    }
    return out;
  }

  return {
    observe,
    /** The metric object a prom-client Registry takes (`registerMetric`). */
    metric: {
      name,
      help,
      type: 'histogram' as const,
      aggregator: 'sum' as const,
      get: () =>
        Promise.resolve({
          name,
          help,
          type: 'histogram' as const,
          aggregator: 'sum' as const,
          values: values(),
        }),
      reset() {
        byRoute.clear();
        other.length = 0;
      },
    },
  };
}
