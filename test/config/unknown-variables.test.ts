import { describe, expect, it } from 'vitest';
import { knownVariables } from '../../src/config/index.js';
import { unknownVariableWarnings } from '../../src/config/read/unknown-variables.js';

const warnings = (env: Record<string, string>) => unknownVariableWarnings(env, knownVariables());
const notRead = (name: string) =>
  `${name} is set but Gatehouse does not read it (the variables it reads: docs/configuration.md)`;
const didYouMean = (name: string, known: string) =>
  `${name} is set but Gatehouse does not read it; did you mean ${known}?`;

describe('variables that look meant for Gatehouse but are not read', () => {
  it.each([
    ['DATABSE_URL', 'DATABASE_URL'],
    ['DATABASE_ULR', 'DATABASE_URL'],
    ['AUTH_SECRT', 'AUTH_SECRET'],
    ['AUTH_URI', 'AUTH_URL'],
    ['PROT', 'PORT'],
    ['NODE_EVN', 'NODE_ENV'],
    ['METRIC_PORT', 'METRICS_PORT'],
    ['SESSION_MAX_AGES', 'SESSION_MAX_AGE'],
    ['database_url', 'DATABASE_URL'],
    ['AUTH_SECRETS_FILE', 'AUTH_SECRET_FILE'],
    // next-auth v4's names for the same settings.
    ['NEXTAUTH_URL', 'AUTH_URL'],
    ['NEXTAUTH_SECRET', 'AUTH_SECRET'],
  ])('%s: did you mean %s?', (typed, known) => {
    expect(warnings({ [typed]: 'x' })).toEqual([didYouMean(typed, known)]);
  });

  it.each([
    ['GATEHOUSE_DATABASE'],
    ['GATEHOUSE_SIGNUP_ENABLED'],
    // Auth.js's own variables: Gatehouse configures Auth.js itself and never hands it the
    // environment, so these would do nothing.
    ['AUTH_DEBUG'],
    ['AUTH_REDIRECT_PROXY_URL'],
    // A provider Auth.js has and Gatehouse does not (its own are read: identity-providers.ts).
    ['AUTH_APPLE_ID'],
    ['NEXTAUTH_DEBUG'],
  ])('%s: one of our prefixes, not a variable we read', (name) => {
    expect(warnings({ [name]: 'x' })).toEqual([notRead(name)]);
  });

  it('names the variable, never its value (it may be a secret)', () => {
    const [warning] = warnings({ AUTH_SECRT: 'hunter2-hunter2-hunter2-hunter2-hunter2' });
    expect(warning).not.toContain('hunter2');
  });

  it('is silent for every variable Gatehouse reads, and for what Node, npm, shells and platforms set', () => {
    const known = Object.fromEntries([...knownVariables()].map((name) => [name, 'x']));
    expect(
      warnings({
        ...known,
        HOME: '/root',
        HOSTNAME: 'pod-1',
        PATH: '/usr/bin',
        PWD: '/app',
        SHELL: '/bin/sh',
        TERM: 'xterm',
        LANG: 'C.UTF-8',
        TZ: 'UTC',
        NODE_OPTIONS: '--max-old-space-size=256',
        NODE_VERSION: '24.21.0',
        NODE_EXTRA_CA_CERTS: '/etc/ca.pem',
        npm_config_cache: '/tmp',
        npm_lifecycle_event: 'start',
        KUBERNETES_SERVICE_HOST: '10.0.0.1',
        KUBERNETES_PORT: 'tcp://10.0.0.1:443',
        // Kubernetes service links for a Service named gatehouse (enableServiceLinks).
        GATEHOUSE_SERVICE_HOST: '10.0.0.9',
        GATEHOUSE_SERVICE_PORT: '3000',
        GATEHOUSE_SERVICE_PORT_HTTP: '3000',
        GATEHOUSE_PORT: 'tcp://10.0.0.9:3000',
        GATEHOUSE_PORT_3000_TCP: 'tcp://10.0.0.9:3000',
        GATEHOUSE_PORT_3000_TCP_PROTO: 'tcp',
        GATEHOUSE_PORT_3000_TCP_ADDR: '10.0.0.9',
        GATEHOUSE_PORT_3000_TCP_PORT: '3000',
        FLY_APP_NAME: 'gatehouse',
        FLY_REGION: 'ams',
        RENDER_SERVICE_ID: 'srv-1',
        PGHOST: 'db',
        PGPORT: '5432',
        POSTGRES_PASSWORD: 'x',
        // Read by Gatehouse's own machinery and tests, outside the settings.
        GATEHOUSE_WORKER_SLOT: '0',
        GATEHOUSE_WARM_CODE_CACHE: '1',
        GATEHOUSE_TEST_FAST_PATHS: 'off',
        GATEHOUSE_FUZZ_RUNS: '100',
      }),
    ).toEqual([]);
  });

  it('follows the schemas: a variable a schema reads is known without a list to update', () => {
    const known = new Set([...knownVariables(), 'SMTP_URL']);
    expect(unknownVariableWarnings({ SMTP_URL: 'smtp://x', SMTP_ULR: 'x' }, known)).toEqual([
      didYouMean('SMTP_ULR', 'SMTP_URL'),
    ]);
  });
});
