import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pipeline } from '../helpers/raw-http.js';
import { freePort, startServerProcess, type ServerProcess } from '../helpers/processes.js';
import { distDir } from '../helpers/spawn.js';

const fastPaths = process.env.GATEHOUSE_TEST_FAST_PATHS === 'off' ? 'off' : 'on';

function rssBytes(pid: number): number {
  const line = fs
    .readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('VmRSS:'));
  return Number(/(\d+)/.exec(line ?? '')?.[1] ?? 0) * 1024;
}

/**
 * One connection that writes `chunks` × 64 KB of pipelined GETs (cycling through `targets`) and
 * never reads a byte of the answers. Resolves once everything is written or the server refused
 * more (it may close the connection).
 */
function floodWithoutReading(port: number, targets: readonly string[], chunks: number) {
  const requests: string[] = [];
  for (let size = 0, i = 0; size < 64 * 1024 * chunks; i += 1) {
    const request = `GET ${targets[i % targets.length]} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;
    requests.push(request);
    size += request.length;
  }
  const socket = net.connect({ port, host: '127.0.0.1' });
  socket.on('error', () => undefined);
  // Never read: the answers stay in the server until the client takes them.
  socket.pause();
  const written = new Promise<void>((resolve) => {
    socket.once('connect', () => socket.write(requests.join(''), () => resolve()));
    socket.once('close', () => resolve());
  });
  return { socket, written };
}

async function healthLatencies(url: string, until: () => boolean): Promise<number[]> {
  const latencies: number[] = [];
  while (!until()) {
    const started = performance.now();
    const response = await fetch(`${url}/api/health`, { signal: AbortSignal.timeout(5000) });
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    latencies.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return latencies.sort((a, b) => a - b);
}

describe(`pipelined requests whose answers are never read (fast paths ${fastPaths})`, () => {
  let dataDir: string;
  let server: ServerProcess;
  let port: number;
  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-flood-'));
    port = await freePort();
    // With the flags the image and `npm start` run it with (dist/gatehouse).
    const args = ['--max-semi-space-size=2', path.join(distDir, 'gatehouse.mjs')];
    server = await startServerProcess(process.execPath, args, {
      port,
      env: {
        PATH: process.env.PATH ?? '',
        DATA_DIR: dataDir,
        PORT: String(port),
        LOG_LEVEL: 'warn',
        FAST_PATHS: fastPaths,
      },
    });
  });
  afterAll(async () => {
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('hold a bounded amount of memory, and other clients are still answered at once', async () => {
    const url = `http://127.0.0.1:${port}`;
    // Warm every route once, so the baseline includes what a first request loads.
    for (const target of ['/api/auth/signin', '/api/auth/session', '/api/health', '/nothing']) {
      await (await fetch(`${url}${target}`)).arrayBuffer();
    }
    const before = rssBytes(server.pid);
    let peak = before;
    let flooding = true;
    const sampler = setInterval(() => (peak = Math.max(peak, rssBytes(server.pid))), 50);
    const probes = healthLatencies(url, () => !flooding);
    // The flood (16 connections of sign-in pages) and the routes answered in front.
    const floods = [
      ...Array.from({ length: 16 }, () => floodWithoutReading(port, ['/api/auth/signin'], 1)),
      ...Array.from({ length: 4 }, () =>
        floodWithoutReading(port, ['/api/health', '/api/auth/session', '/nothing'], 4),
      ),
    ];
    await Promise.all(floods.map((flood) => flood.written));
    await new Promise((resolve) => setTimeout(resolve, 3000));
    flooding = false;
    const latencies = await probes;
    clearInterval(sampler);
    for (const flood of floods) flood.socket.destroy();
    const growthMb = (peak - before) / 1024 / 1024;
    const p99 = latencies[Math.floor(latencies.length * 0.99)] ?? Infinity;
    process.stdout.write(
      `pipelined flood (${fastPaths}): RSS ${(before / 1048576).toFixed(1)} → peak ${(peak / 1048576).toFixed(1)} MB; health p99 ${p99.toFixed(1)} ms over ${latencies.length}\n`,
    );
    // Before: 240-360 MB more, past the shipped 256 MiB. What is left is Node parsing each
    // connection's one 64 KB read (~3 MB of requests, garbage once its connection is closed).
    expect(growthMb).toBeLessThan(128);
    expect(p99).toBeLessThan(1000);
    expect(fs.existsSync(`/proc/${server.pid}`)).toBe(true);
  });

  it('a client that pipelines a few requests and reads them gets every answer', async () => {
    const request = {
      method: 'GET',
      target: '/api/health',
      headers: [['Host', '127.0.0.1']] as [string, string][],
    };
    const answers = await pipeline(
      port,
      Array.from({ length: 16 }, () => request),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array.from({ length: 16 }, () => 200));
  });
});
