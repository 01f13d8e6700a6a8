import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';

const secret = 'a'.repeat(32);
// What `openssl rand -base64 33` gives: production refuses the weak one above.
const strongSecret = 'q3V8rT0k5Zx1Lw9PmB2nY7cJ4hD6fGsA+E/uKiRoWt';

describe('configuration', () => {
  it('defaults are safe and complete in development', () => {
    const result = parseConfig({});
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.config.host).toBe('127.0.0.1');
    expect(result.config.port).toBe(3000);
    expect(result.config.databaseUrl).toBe('file:./data/gatehouse.db');
    expect(result.config.authSecrets).toEqual([]);
    expect(result.config.session.maxAgeSeconds).toBe(30 * 86400);
    expect(result.config.session.absoluteMaxAgeSeconds).toBe(90 * 86400);
    expect(result.config.throttle).toEqual({
      emailMaxFailures: 10,
      ipMaxFailures: 100,
      emailMaxAttempts: 50,
      ipMaxAttempts: 300,
      windowSeconds: 900,
      lockSeconds: 900,
    });
    expect(result.config.bodyLimitBytes).toBe(16384);
    // Hashing threads: below the event loop, and no more than 4 unless asked for.
    expect(result.config.hashNice).toBe(10);
    expect(result.config.hashConcurrency).toBeGreaterThanOrEqual(1);
    expect(result.config.hashConcurrency).toBeLessThanOrEqual(4);
    expect(Object.isFrozen(result.config)).toBe(true);
  });

  it('several comma-separated secrets are kept in order for rotation', () => {
    const result = parseConfig({ AUTH_SECRET: `${secret}, ${'b'.repeat(40)}` });
    expect(result.ok && result.config.authSecrets).toEqual([secret, 'b'.repeat(40)]);
  });

  it.each([
    [{ NODE_ENV: 'production' }, 'AUTH_SECRET: is required in production'],
    [{ NODE_ENV: 'production', AUTH_SECRET: '' }, 'AUTH_SECRET: is required in production'],
    [
      { AUTH_SECRET: 'short' },
      'AUTH_SECRET: each comma-separated secret must be at least 32 bytes',
    ],
    [{ PORT: 'eighty' }, 'PORT:'],
    [{ PORT: '70000' }, 'PORT:'],
    [
      { DATABASE_URL: 'mysql://x' },
      'DATABASE_URL: must start with postgresql:// or postgres:// (PostgreSQL), or file:',
    ],
    [{ AUTH_URL: 'not a url' }, 'AUTH_URL:'],
    [{ NODE_ENV: 'staging' }, 'NODE_ENV:'],
    [{ FAST_PATHS: 'maybe' }, 'FAST_PATHS:'],
    [{ HASH_NICE: '20' }, 'HASH_NICE:'],
    [{ HASH_NICE: '-5' }, 'HASH_NICE:'],
    [
      { SESSION_MAX_AGE: '100', SESSION_ABSOLUTE_MAX_AGE: '60' },
      'SESSION_ABSOLUTE_MAX_AGE: must be at least SESSION_MAX_AGE',
    ],
  ])('%j is refused with a message naming the variable', (env, message) => {
    const result = parseConfig(env);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems.some((p) => p.startsWith(message))).toBe(true);
  });

  it('reports every problem at once', () => {
    const result = parseConfig({ PORT: 'x', LOG_LEVEL: 'loud', AUTH_SECRET: 'short' });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    const names = result.problems.map((p) => p.split(':')[0]).sort();
    expect(names).toEqual(['AUTH_SECRET', 'LOG_LEVEL', 'PORT']);
  });

  it('AUTH_URL keeps only its origin; production listens on all interfaces', () => {
    const result = parseConfig({
      NODE_ENV: 'production',
      AUTH_SECRET: strongSecret,
      AUTH_URL: 'https://a.example/x/',
    });
    expect(result.ok && result.config.authUrl).toBe('https://a.example');
    expect(result.ok && result.config.host).toBe('0.0.0.0');
  });

  it.each([
    ['one character repeated', 'x'.repeat(40)],
    ['a short pattern repeated', 'abc123'.repeat(8)],
    ['few distinct characters', 'abababababcdcdcdcdcdeeeeeeeeeeabababababab'],
    ['a listed older secret that is weak', `${strongSecret},${'0123456789'.repeat(4)}`],
  ])(
    'production refuses an obviously weak AUTH_SECRET (%s), saying how to make one',
    (_, value) => {
      const result = parseConfig({
        NODE_ENV: 'production',
        AUTH_SECRET: value,
        AUTH_URL: 'https://auth.example.com',
      });
      expect(!result.ok && result.problems).toEqual([
        'AUTH_SECRET: is too weak for production (few distinct characters or a repeated pattern); generate one with: openssl rand -base64 33',
      ]);
    },
  );

  it('random hex and base64 secrets are accepted in production', () => {
    for (const value of [
      strongSecret,
      '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
    ]) {
      const result = parseConfig({
        NODE_ENV: 'production',
        AUTH_SECRET: value,
        AUTH_URL: 'https://auth.example.com',
      });
      expect(result.ok).toBe(true);
    }
  });

  it('production refuses to start without AUTH_URL unless AUTH_TRUST_HOST opts into Host-derived origins', () => {
    const without = parseConfig({ NODE_ENV: 'production', AUTH_SECRET: strongSecret });
    expect(!without.ok && without.problems.join('\n')).toMatch(
      /^AUTH_URL: is required in production: the public origin, e\.g\. https:\/\/auth\.example\.com .*AUTH_TRUST_HOST=true/,
    );
    const optedIn = parseConfig({
      NODE_ENV: 'production',
      AUTH_SECRET: strongSecret,
      AUTH_TRUST_HOST: 'true',
    });
    expect(optedIn.ok && optedIn.config.authUrl).toBe(undefined);
    expect(parseConfig({ AUTH_SECRET: strongSecret }).ok).toBe(true);
    expect(parseConfig({ NODE_ENV: 'production', AUTH_TRUST_HOST: 'maybe' }).ok).toBe(false);
  });

  it.each([
    ['development, unset', {}, 200],
    ['production behind a listed proxy, unset', { TRUST_PROXY: '10.0.0.5' }, 200],
    ['production with no proxy listed, unset: every client would be the proxy', {}, 0],
    ['production with no proxy listed, set explicitly', { REQUEST_BUDGET_PER_SECOND: '50' }, 50],
    ['development, turned off', { REQUEST_BUDGET_PER_SECOND: '0' }, 0],
  ])('the request budget per address: %s', (name, env, perSecond) => {
    const production = name.startsWith('production')
      ? { NODE_ENV: 'production', AUTH_SECRET: strongSecret, AUTH_URL: 'https://auth.example.com' }
      : {};
    const result = parseConfig({ ...production, ...env });
    if (!result.ok) throw new Error(result.problems.join('\n'));
    expect(result.config.requestBudget?.perSecond).toBe(perSecond);
  });

  it('the whole config is frozen, down to its lists and nested settings', () => {
    const result = parseConfig({
      AUTH_SECRET: secret,
      MAX_CONNECTIONS: '100',
      METRICS_PORT: '9464',
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const { config } = result;
    for (const part of [
      config,
      config.session,
      config.throttle,
      config.authSecrets,
      config.trustProxy,
      config.connectionLimits,
      config.metrics,
      config.page,
    ]) {
      expect(Object.isFrozen(part)).toBe(true);
    }
    expect(() => {
      (config.session as { maxAgeSeconds: number }).maxAgeSeconds = 1;
    }).toThrow(TypeError);
  });

  // Issue 18: zod's own wording ("received NaN", "Invalid input") named no valid form; each
  // kind of value now says what it takes, then gives one example.
  it.each([
    [{ PORT: 'eighty' }, 'PORT: must be a whole number from 1 to 65535 (e.g. PORT=3000)'],
    [{ PORT: '1.5' }, 'PORT: must be a whole number from 1 to 65535 (e.g. PORT=3000)'],
    [{ HASH_NICE: '20' }, 'HASH_NICE: must be a whole number from 0 to 19 (e.g. HASH_NICE=10)'],
    [
      { AUTH_URL: 'not a url' },
      'AUTH_URL: must be the public origin as a full URL starting with https:// (or http://) (e.g. AUTH_URL=https://auth.example.com)',
    ],
    [
      { WORKERS: 'many' },
      'WORKERS: must be a whole number from 1 to 256, or auto (e.g. WORKERS=1)',
    ],
    [
      { NODE_ENV: 'staging' },
      'NODE_ENV: must be one of development, production, test (e.g. NODE_ENV=development)',
    ],
    [
      { DATABASE_URL: 'mysql://db/gatehouse' },
      'DATABASE_URL: must start with postgresql:// or postgres:// (PostgreSQL), or file: (a SQLite file such as file:./data/gatehouse.db) (e.g. DATABASE_URL=postgresql://gatehouse:password@db:5432/gatehouse)',
    ],
  ])('a bad value (%j) is told what the variable takes, and one valid example', (env, problem) => {
    expect(parseConfig(env)).toEqual({ ok: false, problems: [problem] });
  });

  it('a bad value in one capability does not hide the problems of another', () => {
    const result = parseConfig({ NODE_ENV: 'production', AUTH_SECRET: strongSecret, PORT: 'x' });
    expect(!result.ok && result.problems.map((p) => p.split(':')[0])).toEqual(['PORT', 'AUTH_URL']);
  });

  it('the CLI does not need AUTH_SECRET even in production', () => {
    expect(parseConfig({ NODE_ENV: 'production' }, { requireSecret: false }).ok).toBe(true);
  });
});

describe('secrets from files (Docker and Kubernetes secrets)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-secret-files-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, content: string, mode = 0o600) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, content, { mode });
    return file;
  };

  it('AUTH_SECRET_FILE and DATABASE_URL_FILE are read, their trailing newline dropped', () => {
    const result = parseConfig({
      NODE_ENV: 'production',
      AUTH_SECRET_FILE: write('auth-secret', `${strongSecret}\n`),
      AUTH_URL: 'https://auth.example.com',
      DATABASE_URL_FILE: write('database-url', 'postgres://u:p@db:5432/gatehouse\n'),
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.config.authSecrets).toEqual([strongSecret]);
    expect(result.config.databaseUrl).toBe('postgres://u:p@db:5432/gatehouse');
  });

  it('a rotation list in a file keeps its order', () => {
    const result = parseConfig({
      AUTH_SECRET_FILE: write('rotation', `${secret},${'b'.repeat(40)}`),
    });
    expect(result.ok && result.config.authSecrets).toEqual([secret, 'b'.repeat(40)]);
  });

  it.each([
    ['AUTH_SECRET', secret],
    ['DATABASE_URL', 'file:./x.db'],
  ])('setting both %s and its _FILE is refused, naming both', (name, value) => {
    const result = parseConfig({ [name]: value, [`${name}_FILE`]: write(`both-${name}`, value) });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toEqual([
      `${name}: both ${name} and ${name}_FILE are set; set only one`,
    ]);
  });

  it('a missing file names the variable and the path, and only that problem is reported', () => {
    const missing = path.join(dir, 'no-such-secret');
    const result = parseConfig({
      NODE_ENV: 'production',
      AUTH_SECRET_FILE: missing,
      AUTH_URL: 'https://auth.example.com',
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toEqual([`AUTH_SECRET_FILE: cannot read ${missing} (no such file)`]);
  });

  it('a folder or an empty file is refused without showing any content', () => {
    const empty = write('empty', '\n');
    const result = parseConfig({ AUTH_SECRET_FILE: empty, DATABASE_URL_FILE: dir });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems.sort()).toEqual([
      `AUTH_SECRET_FILE: ${empty} is empty`,
      `DATABASE_URL_FILE: cannot read ${dir} (is a directory)`,
    ]);
  });

  it.skipIf(process.getuid?.() === 0)('an unreadable file says permission denied', () => {
    const locked = write('locked', secret, 0o000);
    const result = parseConfig({ AUTH_SECRET_FILE: locked });
    expect(!result.ok && result.problems).toEqual([
      `AUTH_SECRET_FILE: cannot read ${locked} (permission denied; make it readable by uid ${process.getuid?.()}, the user Gatehouse runs as)`,
    ]);
  });

  it('the file content is validated like the variable, naming the variable', () => {
    const result = parseConfig({ AUTH_SECRET_FILE: write('short', 'short\n') });
    expect(!result.ok && result.problems).toEqual([
      'AUTH_SECRET: each comma-separated secret must be at least 32 bytes',
    ]);
  });
});
