import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface MetricsExposition {
  contentType: string;
  render(): Promise<string>;
}

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

/**
 * `GET /metrics` on its own listener (`METRICS_HOST`:`METRICS_PORT`), so the public port never
 * exposes it. Anything else is 404 or 405; a failure to render is logged and answered 500.
 */
export async function listenMetrics(
  exposition: MetricsExposition,
  address: { host: string; port: number },
  log: { error(fields: object, message: string): void },
): Promise<MetricsServer> {
  const server = http.createServer((request, response) => {
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
  // A scraper keeps its connection; it must not hold a drain open.
  server.keepAliveTimeout = 5000;
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
