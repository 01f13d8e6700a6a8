// Three Gatehouse containers started at once on one empty PostgreSQL (a Deployment's replicas
// on their first rollout), then deploy/k8s: its manifests against the official schemas, and
// its pod template run under Docker as a kubelet would (k8s-validate.ts, k8s-pod.ts, run as
// the command-line tools deploy/k8s/README.md documents).
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, expect } from 'vitest';
import { migrationNames } from '../../src/db/migrate.js';
import { check, cleanups, docker, image, port, run, sh, sleep, waitHealthy } from './containers.ts';

const secret = randomBytes(32).toString('base64');
const pg = `${run}-pg`;
const pgPort = port();
const pgPassword = randomBytes(18).toString('hex');
const pgUrl = `postgres://gatehouse:${pgPassword}@127.0.0.1:${pgPort}/gatehouse`;
const started = cleanups();
started.add(() => docker('rm', '-f', pg));
afterAll(() => started.run(), 120_000);

check(
  'three Gatehouse containers started at once on an empty PostgreSQL all turn healthy, one schema',
  async (figures) => {
    await docker(
      'run',
      '-d',
      '--name',
      pg,
      '--network',
      'host',
      '-e',
      `PGPORT=${pgPort}`,
      '-e',
      'POSTGRES_USER=gatehouse',
      '-e',
      `POSTGRES_PASSWORD=${pgPassword}`,
      'postgres:17',
      'postgres',
      '-c',
      'listen_addresses=127.0.0.1',
    );
    for (let i = 0; ; i += 1) {
      const ready = await sh(
        'docker',
        ['exec', pg, 'pg_isready', '-q', '-h', '127.0.0.1', '-U', 'gatehouse'],
        { allowFail: true },
      );
      if (ready.code === 0) break;
      expect(i < 120, 'PostgreSQL did not start').toBe(true);
      await sleep(250);
    }
    const names = [1, 2, 3].map((i) => `${run}-replica${i}`);
    for (const name of names) started.add(() => docker('rm', '-f', name));
    const ports = names.map(() => port());
    const begun = Date.now();
    await Promise.all(
      names.map((name, i) =>
        docker(
          'run',
          '-d',
          '--name',
          name,
          '--network',
          'host',
          '--read-only',
          '--tmpfs',
          '/tmp',
          '--health-interval',
          '2s',
          '-e',
          `PORT=${ports[i]}`,
          '-e',
          'HOST=127.0.0.1',
          '-e',
          `AUTH_SECRET=${secret}`,
          '-e',
          `DATABASE_URL=${pgUrl}`,
          '-e',
          `AUTH_URL=http://127.0.0.1:${ports[i]}`,
          image,
        ),
      ),
    );
    await Promise.all(names.map((name) => waitHealthy(name)));
    const seconds = ((Date.now() - begun) / 1000).toFixed(1);
    const restarts = await Promise.all(
      names.map(
        async (name) =>
          (await docker('inspect', '-f', '{{.State.Status}}/{{.RestartCount}}', name)).stdout,
      ),
    );
    expect(restarts, `states: ${restarts.join()}`).toEqual(['running/0', 'running/0', 'running/0']);
    const applied = (
      await docker(
        'exec',
        pg,
        'psql',
        '-qtA',
        '-U',
        'gatehouse',
        '-d',
        'gatehouse',
        '-c',
        'select name from kysely_migration order by name',
      )
    ).stdout;
    expect(applied, `migrations recorded: ${JSON.stringify(applied)}`).toBe(
      migrationNames.join('\n'),
    );
    for (const name of names) await docker('rm', '-f', name);
    const replicas = `3 of 3 healthy in ${seconds} s, one schema`;
    figures({ replicas });
    return replicas;
  },
);

check(
  'Kubernetes manifests are valid against the official schemas, and a misspelled field is rejected',
  async () => {
    const { stdout } = await sh(process.execPath, [
      path.join(import.meta.dirname, 'k8s-validate.ts'),
      '--self-test',
    ]);
    return `\n${stdout.replace(/^/gm, '    ')}`;
  },
);

check(
  "the Deployment's pod template, its Secret mounted as files, passes its probes under Docker",
  async () => {
    const { stdout } = await sh(process.execPath, [
      path.join(import.meta.dirname, 'k8s-pod.ts'),
      '--image',
      image,
      '--port',
      String(port()),
      '--name',
      `${run}-pod`,
      // The Secret's keys: the pod reads them from its mounted `secrets` volume.
      '--secret',
      `DATABASE_URL=${pgUrl}`,
      '--secret',
      `AUTH_SECRET=${secret}`,
      '--env',
      'AUTH_URL=http://127.0.0.1',
    ]);
    return stdout.split('\n').slice(-3).join(' | ');
  },
);
