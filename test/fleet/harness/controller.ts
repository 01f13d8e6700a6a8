// The readiness controller: what a platform (a Kubernetes Service's endpoints, a cloud load
// balancer's target health) does, for open-source nginx, which has no active health checks.
// It probes every instance's /api/health/ready and keeps nginx's upstream block equal to the
// set of ready instances that are not terminating.
import { request } from './http.ts';
import type { FleetNginx } from './nginx.ts';
import { sleep } from './processes.ts';

export interface Controller {
  /** Upstream changes so far. */
  readonly log: { at: number; upstreams: number[] }[];
  /**
   * Marks the instance terminating and resolves once nginx has no worker left that could
   * send it a request: Kubernetes takes a pod out of the endpoints before SIGTERM likewise.
   */
  drain(port: number): Promise<void>;
  /** Lets the instance back in; resolves once nginx routes to it (it answered ready). */
  admit(port: number, timeoutMs?: number): Promise<void>;
  /** Resolves once nginx routes exactly to `ports` (the controller saw them so). */
  waitForUpstreams(ports: number[], timeoutMs?: number): Promise<void>;
  ready(port: number): boolean;
  stop(): Promise<void>;
}

/**
 * `nginx` from nginx.ts; `ports` the instances to manage. Probes every `intervalMs`; an
 * instance is taken out on its first failed probe (a platform's failureThreshold of 1, so the
 * scenarios see it quickly) and put back on its first success.
 *
 * With no instance ready (the database down) the upstream keeps every instance that is not
 * terminating: failing open, as cloud load balancers do, so clients get the instances' own
 * 503s with Retry-After instead of nginx's bare 502.
 */
export function startController({
  nginx,
  ports,
  intervalMs = 200,
  probeTimeoutMs = 1500,
}: {
  nginx: FleetNginx;
  ports: number[];
  intervalMs?: number;
  probeTimeoutMs?: number;
}): Controller {
  const state = new Map(ports.map((port) => [port, { ready: true, terminating: false }]));
  const log: Controller['log'] = [];
  let stopped = false;
  // Reconfigurations run one at a time, in order.
  let queue = Promise.resolve();
  let failure: unknown;

  function desired(): number[] {
    const candidates = [...state].filter(([, s]) => !s.terminating);
    const ready = candidates.filter(([, s]) => s.ready);
    return (ready.length > 0 ? ready : candidates).map(([port]) => port).sort((a, b) => a - b);
  }

  function reconcile(): Promise<void> {
    queue = queue.then(async () => {
      const want = desired();
      const have = [...nginx.upstreams].sort((a, b) => a - b);
      if (want.join() === have.join()) return;
      await nginx.setUpstreams(want);
      log.push({ at: Date.now(), upstreams: want });
    });
    queue = queue.catch((error) => {
      failure ??= error;
    });
    return queue;
  }

  async function probe(port: number): Promise<void> {
    const answer = await request(`http://127.0.0.1:${port}/api/health/ready`, {
      timeoutMs: probeTimeoutMs,
    });
    const entry = state.get(port);
    if (entry !== undefined) entry.ready = answer.status === 200;
  }

  const loop = (async () => {
    while (!stopped) {
      const started = Date.now();
      await Promise.all([...state.keys()].map(probe));
      if (stopped) break;
      await reconcile();
      await sleep(Math.max(0, intervalMs - (Date.now() - started)));
    }
  })();

  const ensure = () => {
    if (failure !== undefined) throw failure;
  };

  return {
    log,
    async drain(port) {
      const entry = state.get(port);
      if (entry === undefined) throw new Error(`no instance on ${port}`);
      entry.terminating = true;
      await reconcile();
      ensure();
    },
    async admit(port, timeoutMs = 20_000) {
      const entry = state.get(port);
      if (entry === undefined) throw new Error(`no instance on ${port}`);
      entry.terminating = false;
      // Unknown until probed: a probe from before the restart says nothing about the new process.
      entry.ready = false;
      const deadline = Date.now() + timeoutMs;
      while (!nginx.upstreams.includes(port) || !entry.ready) {
        ensure();
        if (Date.now() > deadline) throw new Error(`instance on ${port} not back in nginx`);
        await sleep(20);
      }
      ensure();
    },
    async waitForUpstreams(ports, timeoutMs = 10_000) {
      const want = [...ports].sort((a, b) => a - b).join();
      const deadline = Date.now() + timeoutMs;
      while ([...nginx.upstreams].sort((a, b) => a - b).join() !== want) {
        ensure();
        if (Date.now() > deadline) {
          throw new Error(`nginx upstreams ${nginx.upstreams.join()} never became ${want}`);
        }
        await sleep(20);
      }
    },
    ready: (port) => state.get(port)?.ready === true,
    async stop() {
      stopped = true;
      await loop;
      await queue;
    },
  };
}
