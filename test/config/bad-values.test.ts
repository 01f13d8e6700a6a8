import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { knownVariables, parseConfig, plainWording } from '../../src/config/index.js';
import { fileVariables } from '../../src/config/read/secret-files.js';

/**
 * One bad value per variable. A variable added later without a row here is tried with the
 * generic values below, so a new number, switch or URL is covered at once; one that takes any
 * of them needs a row: a bad value, or `null` with a comment saying why any text is fine.
 */
const badValues: Record<string, string | null> = {
  NODE_ENV: 'staging',
  LOG_LEVEL: 'loud',
  WORKERS: '0',
  FAST_PATHS: 'maybe',
  HOST: '',
  PORT: 'abc',
  TRUST_PROXY: '10.0.0.0/8, proxy.internal',
  BODY_LIMIT_BYTES: '16k',
  REQUEST_TIMEOUT_MS: '10s',
  KEEP_ALIVE_TIMEOUT_MS: '-1',
  MAX_CONNECTIONS: 'lots',
  MAX_CONNECTIONS_PER_ADDRESS: '1.5',
  REQUEST_BUDGET_PER_SECOND: 'unlimited',
  REQUEST_BUDGET_BURST: '0',
  LOG_SUCCESS_SAMPLE: '10%',
  DATA_DIR: '',
  DATABASE_URL: 'mysql://db/gatehouse',
  DATABASE_PREPARED: 'maybe',
  AUTH_SECRET: 'short',
  AUTH_URL: 'auth.example.com',
  AUTH_TRUST_HOST: 'yes',
  AUTH_URL_ALLOW_HTTP: 'yes',
  SESSION_COOKIE_PREFIX: '__Host',
  SESSION_MAX_AGE: '30d',
  SESSION_UPDATE_AGE: '-1',
  SESSION_ABSOLUTE_MAX_AGE: '59',
  SESSIONS_PER_USER_MAX: '0',
  PASSWORD_MIN_LENGTH: '4',
  THROTTLE_EMAIL_MAX_FAILURES: '0',
  THROTTLE_IP_MAX_FAILURES: 'ten',
  THROTTLE_EMAIL_MAX_ATTEMPTS: '0',
  THROTTLE_IP_MAX_ATTEMPTS: '1e9',
  THROTTLE_WINDOW_SECONDS: '15m',
  THROTTLE_LOCK_SECONDS: '86401',
  INVITE_TTL: '7d',
  HASH_CONCURRENCY: '0',
  HASH_NICE: '20',
  HASH_QUEUE_MAX: '-5',
  METRICS_PORT: '70000',
  METRICS_HOST: '0.0.0.0', // refused without METRICS_PORT
  PAGE_PRODUCT_NAME: ' ',
  PAGE_ACCENT_COLOR: 'blue',
  PAGE_LOGO_URL: 'http://cdn.example.com/logo.svg',
  ACCOUNT_PAGES_PATH: '/api/auth/signin',
  SIGNUP: 'yes',
  REQUIRE_VERIFIED_EMAIL: 'required',
  AUTH_SECRET_FILE: '/nonexistent/auth-secret',
  DATABASE_URL_FILE: '/nonexistent/database-url',
  // A client id, secret or label may be any text; a provider half given is refused naming what
  // is missing (test/config/identity-providers.test.ts).
  AUTH_OIDC_ID: null,
  AUTH_OIDC_SECRET: null,
  AUTH_OIDC_NAME: null,
  AUTH_GITHUB_ID: null,
  AUTH_GITHUB_SECRET: null,
  AUTH_GOOGLE_ID: null,
  AUTH_GOOGLE_SECRET: null,
  AUTH_MICROSOFT_ENTRA_ID_ID: null,
  AUTH_MICROSOFT_ENTRA_ID_SECRET: null,
  AUTH_GITLAB_ID: null,
  AUTH_GITLAB_SECRET: null,
  // Any text is an old app's secret; alone, it is LEGACY_SESSIONS_UNTIL that is missing.
  LEGACY_AUTH_SECRET: null,
  // Any text is an audience (a URL or a name); the introspection file is read at start, as
  // ADMIN_TOKEN_FILE (its problems are warnings: test/tokens/token-settings.test.ts).
  TOKEN_AUDIENCE: null,
  INTROSPECTION_TOKEN_FILE: null,
  AUTH_OIDC_ISSUER: 'login.example.com',
  AUTH_GITHUB_ENTERPRISE_URL: 'http://github.example.com',
  AUTH_MICROSOFT_ENTRA_ID_ISSUER: 'https://login.example.com/?tenant=x',
  AUTH_OIDC_SIGNUP: 'yes',
};
const genericBadValues = ['not-a-valid-value', '-1', '99999999999', ''];

/**
 * Messages that give no `e.g.`, and why: AUTH_SECRET's, FACTOR_KEY's and AUDIT_KEY's say how to make one
 * (openssl; an example key would be copied), and a `_FILE` variant's name the operator's own
 * path and what is wrong with it.
 */
const noExample = new Set([
  'AUTH_SECRET',
  'FACTOR_KEY',
  'AUDIT_KEY',
  ...fileVariables.map((name) => `${name}_FILE`),
]);

function problemsFor(name: string, value: string): string[] {
  const result = parseConfig({ [name]: value });
  return result.ok ? [] : result.problems.filter((problem) => problem.startsWith(`${name}:`));
}

describe('every variable refuses a bad value naming itself and a valid example', () => {
  const names = [...knownVariables()].sort();

  it.each(names)('%s', (name) => {
    const row = Object.hasOwn(badValues, name) ? badValues[name] : undefined;
    if (row === null) return;
    const candidates = row === undefined ? genericBadValues : [row];
    const problems = candidates
      .map((value) => problemsFor(name, value))
      .find((found) => found.length > 0);
    if (problems === undefined)
      throw new Error(`${name}: no bad value refused; add a row to badValues in this file`);
    for (const problem of problems) {
      expect(problem).toMatch(new RegExp(`^${name}: `));
      if (!noExample.has(name)) expect(problem).toMatch(/e\.g\. [A-Z_]+=\S/);
      // zod's generic wording names no valid form.
      expect(problem).not.toMatch(/Invalid input|received NaN|Invalid option|Too (big|small)/);
    }
  });

  it('DATABASE_URL names both PostgreSQL schemes and the SQLite form', () => {
    const [problem] = problemsFor('DATABASE_URL', 'mysql://db/gatehouse');
    expect(problem).toContain('postgresql://');
    expect(problem).toContain('postgres://');
    expect(problem).toContain('file:');
  });

  it.each([
    ['postgresql://gatehouse:pw@db:5432/gatehouse'],
    ['postgres://gatehouse:pw@db/gatehouse'],
    ['file:./data/gatehouse.db'],
  ])('DATABASE_URL=%s is accepted', (url) => {
    expect(parseConfig({ DATABASE_URL: url }).ok).toBe(true);
  });

  it.each([['/api/account/pages'], ['/api/auth/session'], ['/account/'], ['account'], ['/']])(
    'ACCOUNT_PAGES_PATH=%s is refused: not a path of its own',
    (value) => {
      expect(problemsFor('ACCOUNT_PAGES_PATH', value)).toHaveLength(1);
    },
  );

  it.each([['/account'], ['/api/auth/account'], ['/auth/pages']])(
    'ACCOUNT_PAGES_PATH=%s is accepted',
    (value) => {
      expect(parseConfig({ ACCOUNT_PAGES_PATH: value }).ok).toBe(true);
    },
  );

  it.each([
    ['10.0.0.5'],
    ['10.0.0.0/8, 192.168.0.0/16'],
    ['::1, fd00::/8'],
    ['10.0.0.0/255.0.0.0'],
    ['loopback, uniquelocal'],
  ])('TRUST_PROXY=%s is accepted', (value) => {
    expect(parseConfig({ TRUST_PROXY: value }).ok).toBe(true);
  });
});

describe('a plain-http AUTH_URL in production', () => {
  const production = {
    NODE_ENV: 'production',
    AUTH_SECRET: 'q3V8rT0k5Zx1Lw9PmB2nY7cJ4hD6fGsA+E/uKiRoWt',
  };

  it('is refused, saying why and how to allow it', () => {
    const result = parseConfig({ ...production, AUTH_URL: 'http://auth.example.com' });
    expect(!result.ok && result.problems).toEqual([
      'AUTH_URL: is plain http in production (http://auth.example.com): session cookies would be sent without Secure and passwords in clear text; use https:// (TLS at your proxy), e.g. AUTH_URL=https://auth.example.com, or set AUTH_URL_ALLOW_HTTP=true if plain http is intended',
    ]);
  });

  it('is accepted with AUTH_URL_ALLOW_HTTP=true', () => {
    const result = parseConfig({
      ...production,
      AUTH_URL: 'http://auth.internal',
      AUTH_URL_ALLOW_HTTP: 'true',
    });
    expect(result.ok && result.config.authUrl).toBe('http://auth.internal');
  });

  it.each([
    ['http://localhost:3000'],
    ['http://app.localhost'],
    ['http://127.0.0.1:8080'],
    ['http://[::1]:3000'],
  ])('is accepted on a loopback origin (%s): it never leaves the machine', (url) => {
    expect(parseConfig({ ...production, AUTH_URL: url }).ok).toBe(true);
  });

  it('is accepted in development', () => {
    expect(parseConfig({ AUTH_URL: 'http://auth.example.com' }).ok).toBe(true);
  });
});

describe("a schema that keeps zod's own wording (a variable added with plain zod)", () => {
  it.each([
    [z.enum(['smtp', 'log']), 'mail', 'must be one of smtp, log'],
    [z.coerce.number(), 'ten', 'must be a number'],
    [z.coerce.number().check(z.minimum(1)), '0', 'must be at least 1'],
    [z.coerce.number().check(z.maximum(10)), '11', 'must be at most 10'],
    [z.string().check(z.minLength(3)), 'ab', 'must be at least 3 characters long'],
    [z.url(), 'mail.example.com', 'must be a full URL'],
    [z.email(), 'not-an-address', 'must be an email address'],
    [z.string().check(z.minLength(1, 'says it its own way')), '', 'says it its own way'],
  ])('is reworded for the operator (%#)', (schema, value, message) => {
    const parsed = z.safeParse(schema as z.ZodMiniType, value);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map(plainWording)).toEqual([message]);
  });
});
