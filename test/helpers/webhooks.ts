import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { freePort, startServerProcess } from './processes.js';
import { distDir } from './spawn.js';

/*
 * Webhooks as an application meets them: a receiver on loopback that verifies every delivery
 * with `standardwebhooks`, and the built service started with the variables that turn them on.
 */

/** A new webhook secret, as the docs make one. */
export const newWebhookSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

export interface Received {
  id: string;
  type: string;
  data: Record<string, unknown>;
  body: string;
  headers: Record<string, string>;
}

/**
 * A receiver as an application would write one, on loopback: every delivery verified with the
 * `standardwebhooks` package (nobody here wrote it) before it is kept, and answered 204. `down`
 * closes the port (connections refused), `up` opens it again.
 */
export async function startReceiver(secret: string, delayMs = 0) {
  const verifier = new Webhook(secret);
  const received: Received[] = [];
  const refused: string[] = [];
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      const headers = Object.fromEntries(
        Object.entries(request.headers).map(([name, value]) => [name, String(value)]),
      );
      try {
        const event = verifier.verify(body, headers) as Received;
        received.push({ ...event, id: headers['webhook-id'] ?? '', body, headers });
        setTimeout(() => response.writeHead(204).end(), delayMs);
      } catch (error) {
        refused.push(String(error));
        response.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    refused,
    down: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
    up: () => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export async function until(check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
}

/** Each id once, and how many deliveries there were in all. */
export const idsOf = (received: Received[]) => ({
  distinct: new Set(received.map((event) => event.id)).size,
  total: received.length,
});

/** The built service on a free port of loopback, with `env` (WEBHOOK_URL, …); `url` its origin. */
export async function startService(env: Record<string, string>) {
  const port = await freePort();
  const service = await startServerProcess(
    process.execPath,
    [path.join(distDir, 'gatehouse.mjs')],
    {
      port,
      env: { PATH: process.env.PATH ?? '', PORT: String(port), LOG_LEVEL: 'warn', ...env },
    },
  );
  return Object.assign(service, { url: `http://127.0.0.1:${port}` });
}
