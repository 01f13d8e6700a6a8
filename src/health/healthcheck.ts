import http from 'node:http';

/**
 * The container's HEALTHCHECK (`gatehouse healthcheck`): GET /api/health on this container's
 * own port, exit 0 on 200. Written in Node because slim images have no curl or wget. A wildcard
 * listen address is probed on loopback.
 */
const timeoutMs = 2000;
const port = Number(process.env.PORT ?? '3000');
const listen = process.env.HOST ?? '';
const host = listen === '' || listen === '0.0.0.0' || listen === '::' ? '127.0.0.1' : listen;

const request = http.get(
  { host, port, path: '/api/health', timeout: timeoutMs, headers: { connection: 'close' } },
  (response) => {
    response.resume();
    process.exitCode = response.statusCode === 200 ? 0 : 1;
    if (response.statusCode !== 200) {
      process.stderr.write(`healthcheck: /api/health answered ${response.statusCode}\n`);
    }
  },
);
request.on('timeout', () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)));
request.on('error', (error) => {
  process.stderr.write(`healthcheck: ${error.message}\n`);
  process.exitCode = 1;
});
