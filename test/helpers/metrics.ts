import net from 'node:net';
import path from 'node:path';
import { expect } from 'vitest';
import { freePort, startServerProcess, untilAccepts } from './processes.js';
import { distDir, runNode } from './spawn.js';

export const password = 'a long and fine password';
const fastPaths = process.env.GATEHOUSE_TEST_FAST_PATHS === 'off' ? 'off' : 'on';

/** One scrape of `/metrics`, read as Prometheus reads the text format. */
export interface Scrape {
  /** The sample's value, or undefined when the series is absent. Labels must match exactly. */
  value(name: string, labels?: Record<string, string>): number | undefined;
  /** The sum over every series of `name` whose labels include `labels` (0 when none). */
  sum(name: string, labels?: Record<string, string>): number;
  /** The values one label takes across the series of `name`. */
  labelValues(name: string, label: string): string[];
  text: string;
}

function seriesKey(name: string, labels: Record<string, string>): string {
  const pairs = Object.entries(labels)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, value]) => `${key}=${JSON.stringify(value)}`);
  return `${name}{${pairs.join(',')}}`;
}

export function parseExposition(text: string): Scrape {
  const samples = new Map<string, number>();
  const series: { name: string; labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null) throw new Error(`not an exposition line: ${line}`);
    const [, name = '', rawLabels = '', value = ''] = match;
    const labels: Record<string, string> = {};
    for (const pair of rawLabels.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1] ?? ''] = pair[2] ?? '';
    }
    samples.set(seriesKey(name, labels), Number(value));
    series.push({ name, labels, value: Number(value) });
  }
  const matching = (name: string, labels: Record<string, string>) =>
    series.filter(
      (entry) =>
        entry.name === name &&
        Object.entries(labels).every(([key, value]) => entry.labels[key] === value),
    );
  return {
    text,
    value: (name, labels = {}) => samples.get(seriesKey(name, labels)),
    sum: (name, labels = {}) => matching(name, labels).reduce((total, e) => total + e.value, 0),
    labelValues: (name, label) => [
      ...new Set(matching(name, {}).map((entry) => entry.labels[label] ?? '')),
    ],
  };
}

export async function scrape(metricsUrl: string): Promise<Scrape> {
  const response = await fetch(metricsUrl);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseExposition(await response.text());
}

export function connects(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Adds a user with `password` through the real CLI. */
export async function addUser(dataDir: string, email: string): Promise<void> {
  const add = await runNode(
    'gatehouse-cli.cjs',
    ['users', 'add', '--email', email, '--password-stdin'],
    { DATA_DIR: dataDir },
    password,
  );
  expect(add.code, add.stderr).toBe(0);
}

/** The built service with METRICS_PORT set, both ports free ones on loopback. */
export async function startGatehouse(dataDir: string, env: Record<string, string>) {
  const port = await freePort();
  const metricsPort = await freePort();
  const server = await startServerProcess(process.execPath, [path.join(distDir, 'gatehouse.mjs')], {
    port,
    env: {
      PATH: process.env.PATH ?? '',
      DATA_DIR: dataDir,
      PORT: String(port),
      METRICS_PORT: String(metricsPort),
      LOG_LEVEL: 'warn',
      FAST_PATHS: fastPaths,
      ...env,
    },
  });
  // The public port accepts first; the metrics listener opens right after it.
  await untilAccepts(metricsPort);
  return { server, port, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`, metricsPort };
}
