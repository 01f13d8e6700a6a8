import type { AddressInfo } from 'node:net';
import { guardedServer } from '../http/listener-guard.js';

export interface MetricsExposition {
  contentType: string;
  render(): Promise<string>;
}

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

/**
 * A scraper or two hold a connection each; the rest is somebody else. Idle connections give
 * way to new ones at the caps (src/http/connection-limits.ts), so a flood of them churns
 * among itself and a scraper still gets in.
 */
export const metricsConnectionLimits = { max: 64, perAddress: 16 };

/** A scraper keeps its connection between scrapes; it must not hold a drain open. */
const metricsKeepAliveMs = 5000;

/**
 * `GET /metrics` on its own listener (`METRICS_HOST`:`METRICS_PORT`), so the public port never
 * exposes it. Anything else is 404 or 405; a failure to render is logged and answered 500. The
 * listener has the public one's protections (src/http/listener-guard.ts), with caps of its
 * own: connections held open here must not take descriptors or memory the public port needs.
 */
export async function listenMetrics(
  exposition: MetricsExposition,
  address: { host: string; port: number; requestTimeoutMs?: number },
  log: {
    error(fields: object, message: string): void;
    warn?(fields: object, message: string): void;
  },
): Promise<MetricsServer> {
  const requestTimeoutMs = address.requestTimeoutMs ?? 10_000;
  const protections = {
    requestTimeoutMs,
    connectionTimeoutMs: requestTimeoutMs * 2,
    keepAliveTimeoutMs: metricsKeepAliveMs,
    connections: {
      limits: metricsConnectionLimits,
      warn: (details: Record<string, unknown>, message: string) =>
        log.warn?.({ ...details, listener: 'metrics' }, message),
    },
  };
  const { server } = guardedServer(protections, (request, response) => {
    const path = (request.url ?? '').split('?', 1)[0];
    const answer = (status: number, body: string, headers: Record<string, string> = {}) => {
      response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers });
      response.end(request.method === 'HEAD' ? undefined : body);
    };
    if (path !== '/metrics') return answer(404, 'Not found: metrics are at /metrics\n');
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return answer(405, 'Method not allowed\n', { allow: 'GET, HEAD' });
    }
    exposition.render().then(
      (body) => answer(200, body, { 'content-type': exposition.contentType }),
      (error: unknown) => {
        log.error({ err: error }, 'rendering metrics failed');
        answer(500, 'Metrics could not be rendered\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(address.port, address.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
