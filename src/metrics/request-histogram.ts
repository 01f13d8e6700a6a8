/** Upper bounds in seconds: a session read takes well under a millisecond, a sign-in ~50-500 ms. */
export const requestBucketsSeconds = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
] as const;

interface Series {
  labels: { route: string; method: string; status: string };
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
 * prom-client's `Histogram.observe` validates and hashes its label object on each call (about
 * a microsecond, a few per cent of a session read); here a series is one Map lookup.
 */
export function createRequestHistogram() {
  const name = 'gatehouse_http_request_duration_seconds';
  const series = new Map<string, Series>();
  const bucketCount = requestBucketsSeconds.length;

  function observe(route: string, method: string, status: number, seconds: number): void {
    const key = `${route} ${method} ${status}`;
    let entry = series.get(key);
    if (entry === undefined) {
      entry = {
        labels: { route, method, status: String(status) },
        counts: new Float64Array(bucketCount + 1),
        sum: 0,
        count: 0,
      };
      series.set(key, entry);
    }
    let bucket = 0;
    while (bucket < bucketCount && seconds > requestBucketsSeconds[bucket]!) bucket += 1;
    entry.counts[bucket]! += 1;
    entry.sum += seconds;
    entry.count += 1;
  }

  function values(): MetricValue[] {
    const out: MetricValue[] = [];
    for (const { labels, counts, sum, count } of series.values()) {
      let cumulative = 0;
      requestBucketsSeconds.forEach((le, index) => {
        cumulative += counts[index]!;
        out.push({ labels: { ...labels, le }, value: cumulative, metricName: `${name}_bucket` });
      });
      out.push({ labels: { ...labels, le: '+Inf' }, value: count, metricName: `${name}_bucket` });
      out.push({ labels, value: sum, metricName: `${name}_sum` });
      out.push({ labels, value: count, metricName: `${name}_count` });
    }
    return out;
  }

  return {
    observe,
    /** The metric object a prom-client Registry takes (`registerMetric`). */
    metric: {
      name,
      help: 'HTTP requests by route (or "other"), method and status, and how long each took.',
      type: 'histogram' as const,
      aggregator: 'sum' as const,
      get: () =>
        Promise.resolve({
          name,
          help: 'HTTP requests by route (or "other"), method and status, and how long each took.',
          type: 'histogram' as const,
          aggregator: 'sum' as const,
          values: values(),
        }),
      reset: () => series.clear(),
    },
  };
}
