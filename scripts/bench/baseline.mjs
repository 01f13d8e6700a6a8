// @ts-check
// The floor for `npm run bench`: the cheapest Node can answer Gatehouse's /api/health, with the
// same JSON shape and the same kind of work per request (a fresh timestamp), so the gap to
// Gatehouse is framework + middleware, not the machine. Env: PORT, HOST.
// JavaScript, type-checked by scripts/tsconfig.json (`@ts-check`), not TypeScript: Node strips a
// `.ts` file's types at every start, and the start-up figure would count that against the floor.
import { readFileSync } from 'node:fs';
import http from 'node:http';

const port = Number(process.env.PORT ?? 3000);
const host = process.env.HOST ?? '127.0.0.1';

let version = 'unknown';
try {
  version = JSON.parse(
    readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
  ).version;
} catch {
  // Same fallback as Gatehouse's own health route: the body shape must not depend on it.
}

const server = http.createServer((request, response) => {
  const path = request.url?.split('?', 1)[0];
  if (path === '/api/health' && (request.method === 'GET' || request.method === 'HEAD')) {
    const body = JSON.stringify({ status: 'ok', timestamp: new Date().toISOString(), version });
    response.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-store',
      'content-length': Buffer.byteLength(body),
    });
    response.end(request.method === 'HEAD' ? undefined : body);
    return;
  }
  response.writeHead(404, { 'content-type': 'application/json; charset=utf-8' });
  response.end('{"error":"not_found"}');
});

// Match Fastify's default so wrk's 32 connections are not churned by a shorter idle timeout.
server.keepAliveTimeout = 72_000;
server.listen(port, host);

const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
