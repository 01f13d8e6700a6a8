import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../helpers/client.js';
import { addUser, password, startGatehouse } from '../helpers/metrics.js';
import { freePort, startServerProcess, type ServerProcess } from '../helpers/processes.js';

// Debian's prometheus package; the suite is reported as skipped without it.
const prometheusBinary = ['/usr/bin/prometheus'].find((file) => fs.existsSync(file));
const promtoolBinary = ['/usr/bin/promtool'].find((file) => fs.existsSync(file));
const rulesDir = path.resolve(import.meta.dirname, '../../deploy/prometheus');
const rulesFile = path.join(rulesDir, 'gatehouse-alerts.yaml');

interface Vector {
  status: string;
  data: { result: { metric: Record<string, string>; value: [number, string] }[] };
}

describe.skipIf(promtoolBinary === undefined)('the example alerting rules', () => {
  it('pass `promtool check rules` and their unit tests', () => {
    const check = spawnSync(promtoolBinary!, ['check', 'rules', rulesFile], { encoding: 'utf8' });
    expect(check.status, check.stdout + check.stderr).toBe(0);
    expect(check.stdout).toContain('SUCCESS: 8 rules found');
    const test = spawnSync(promtoolBinary!, ['test', 'rules', 'gatehouse-alerts.test.yaml'], {
      cwd: rulesDir,
      encoding: 'utf8',
    });
    expect(test.status, test.stdout + test.stderr).toBe(0);
  });
});

describe.skipIf(prometheusBinary === undefined)('a real Prometheus scraping an instance', () => {
  let dir: string;
  let gatehouse: ServerProcess;
  let prometheus: ServerProcess;
  let base: string;
  let prometheusUrl: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-prometheus-'));
    const dataDir = path.join(dir, 'data');
    await addUser(dataDir, 'ada@example.com');
    const started = await startGatehouse(dataDir, {});
    gatehouse = started.server;
    base = `http://127.0.0.1:${started.port}`;
    const port = await freePort();
    prometheusUrl = `http://127.0.0.1:${port}`;
    const config = path.join(dir, 'prometheus.yml');
    fs.writeFileSync(
      config,
      [
        'global: { scrape_interval: 1s, evaluation_interval: 1s }',
        `rule_files: [${JSON.stringify(rulesFile)}]`,
        'scrape_configs:',
        '  - job_name: gatehouse',
        `    static_configs: [{ targets: ["127.0.0.1:${started.metricsPort}"] }]`,
        '',
      ].join('\n'),
    );
    prometheus = await startServerProcess(
      prometheusBinary!,
      [
        `--config.file=${config}`,
        `--storage.tsdb.path=${path.join(dir, 'tsdb')}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { port, cwd: dir, env: { PATH: process.env.PATH ?? '' }, timeoutMs: 20_000 },
    );
  }, 40_000);

  afterAll(async () => {
    await prometheus?.stop();
    await gatehouse?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function query(expression: string): Promise<number | undefined> {
    const response = await fetch(
      `${prometheusUrl}/api/v1/query?query=${encodeURIComponent(expression)}`,
    );
    // Prometheus answers 503 until its storage is ready; a slow start is not a wrong value.
    if (response.status === 503) return undefined;
    const body = (await response.json()) as Vector;
    expect(body.status).toBe('success');
    const value = body.data.result[0]?.value[1];
    return value === undefined ? undefined : Number(value);
  }

  /** Polls Prometheus's query API until the expression reads `expected` (scrapes are 1 s apart). */
  async function eventually(expression: string, expected: number): Promise<void> {
    let last: number | undefined;
    for (const deadline = Date.now() + 20_000; Date.now() < deadline; await sleep(250)) {
      last = await query(expression);
      if (last === expected) return;
    }
    expect(last, expression).toBe(expected);
  }

  it('reads back sign-ins by outcome and requests by route from its own query API', async () => {
    await eventually('up{job="gatehouse"}', 1);
    const ada = new Client(base);
    for (let i = 0; i < 2; i += 1) {
      expect((await ada.signIn('ada@example.com', password)).status).toBe(200);
    }
    for (let i = 0; i < 3; i += 1) {
      expect((await ada.signIn('ada@example.com', `wrong ${i}`)).status).toBe(200);
    }
    for (let i = 0; i < 4; i += 1) expect((await ada.get('/api/auth/session')).status).toBe(200);
    await eventually('gatehouse_signins_total{job="gatehouse",outcome="success"}', 2);
    await eventually('gatehouse_signins_total{job="gatehouse",outcome="invalid"}', 3);
    await eventually('gatehouse_signins_total{job="gatehouse",outcome="throttled"}', 0);
    await eventually(
      'sum(gatehouse_http_request_duration_seconds_count{job="gatehouse",route="/api/auth/session"})',
      4,
    );
    // The process defaults come along: the scrape is of a live Node process.
    expect(await query('process_resident_memory_bytes{job="gatehouse"} > 0')).toBeGreaterThan(0);
  }, 60_000);

  it('loads the example alerting rules, with none pending or firing on healthy traffic', async () => {
    type Rule = { name: string; health: string; lastEvaluation: string };
    let rules: Rule[] = [];
    // Wait until Prometheus has evaluated every rule at least once.
    for (const deadline = Date.now() + 20_000; Date.now() < deadline; await sleep(250)) {
      const response = await fetch(`${prometheusUrl}/api/v1/rules`);
      if (response.status === 503) continue;
      const body = (await response.json()) as { data: { groups: { rules: Rule[] }[] } };
      rules = body.data.groups.flatMap((group) => group.rules);
      if (rules.length > 0 && rules.every((rule) => rule.health === 'ok')) break;
    }
    expect(rules.map((rule) => rule.name).sort()).toEqual([
      'GatehouseDatabaseErrors',
      'GatehouseHasherSaturated',
      'GatehouseMailBacklog',
      'GatehouseMailFailed',
      'GatehouseNotReady',
      'GatehouseReadinessFlapping',
      'GatehouseSignInFailureSpike',
      'GatehouseThrottleLocks',
    ]);
    expect(rules.map((rule) => rule.health)).toEqual(rules.map(() => 'ok'));
    expect(await query('count(ALERTS) or vector(0)')).toBe(0);
  });
});
