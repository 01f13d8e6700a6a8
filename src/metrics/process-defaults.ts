import type { Registry } from 'prom-client';
import eventLoopLag from 'prom-client/lib/metrics/eventLoopLag.js';
import heapSizeAndUsed from 'prom-client/lib/metrics/heapSizeAndUsed.js';
import heapSpacesSizeAndUsed from 'prom-client/lib/metrics/heapSpacesSizeAndUsed.js';
import osMemoryHeap from 'prom-client/lib/metrics/osMemoryHeap.js';
import processCpuTotal from 'prom-client/lib/metrics/processCpuTotal.js';
import processHandles from 'prom-client/lib/metrics/processHandles.js';
import processMaxFileDescriptors from 'prom-client/lib/metrics/processMaxFileDescriptors.js';
import processOpenFileDescriptors from 'prom-client/lib/metrics/processOpenFileDescriptors.js';
import processRequests from 'prom-client/lib/metrics/processRequests.js';
import processResources from 'prom-client/lib/metrics/processResources.js';
import processStartTime from 'prom-client/lib/metrics/processStartTime.js';
import version from 'prom-client/lib/metrics/version.js';

/**
 * prom-client's process defaults (`collectDefaultMetrics`) but one: `nodejs_gc_duration_seconds`.
 * Its collector observes every garbage collection through perf_hooks, and with the small young
 * generation `npm start` runs with (`--max-semi-space-size=2`) collections come hundreds of
 * times a second under load: in the benchmark it alone cost the session read 3-5 % (1 % for all
 * the rest). Everything else here is read when scraped, but for the event-loop delay histogram
 * (a libuv timer every 10 ms).
 */
export function collectProcessDefaults(registry: Registry): void {
  const config = { eventLoopMonitoringPrecision: 10 };
  for (const collect of [
    processCpuTotal,
    processStartTime,
    osMemoryHeap,
    processOpenFileDescriptors,
    processMaxFileDescriptors,
    eventLoopLag,
    processResources,
    processHandles,
    processRequests,
    heapSizeAndUsed,
    heapSpacesSizeAndUsed,
    version,
  ]) {
    collect(registry, config);
  }
}
