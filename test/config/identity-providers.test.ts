import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';

const base = { NODE_ENV: 'development' };

function problems(env: Record<string, string>): string[] {
  const result = parseConfig({ ...base, ...env });
  return result.ok ? [] : result.problems;
}

describe('identity providers from the environment, by Auth.js names', () => {
  it('none is on unless its id and secret are set', () => {
    const result = parseConfig(base);
    expect(result.ok && result.config.identityProviders).toEqual([]);
  });

  it('a generic OpenID Connect provider with its label, and GitHub with its defaults', () => {
    const result = parseConfig({
      ...base,
      AUTH_OIDC_ISSUER: 'https://login.example.com/',
      AUTH_OIDC_ID: 'gatehouse',
      AUTH_OIDC_SECRET: 'oidc-secret',
      AUTH_OIDC_NAME: 'Acme SSO',
      AUTH_GITHUB_ID: 'gh-id',
      AUTH_GITHUB_SECRET: 'gh-secret',
      AUTH_GITHUB_SIGNUP: 'open',
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.config.identityProviders).toEqual([
      {
        id: 'oidc',
        name: 'Acme SSO',
        clientId: 'gatehouse',
        clientSecret: 'oidc-secret',
        // Exactly as given: the discovery document must name the same issuer.
        issuer: 'https://login.example.com/',
        signup: undefined,
      },
      {
        id: 'github',
        name: 'GitHub',
        clientId: 'gh-id',
        clientSecret: 'gh-secret',
        signup: 'open',
      },
    ]);
  });

  it.each([
    [{ AUTH_OIDC_ID: 'x' }, ['AUTH_OIDC_SECRET', 'AUTH_OIDC_ISSUER']],
    [{ AUTH_OIDC_ISSUER: 'https://login.example.com', AUTH_OIDC_SECRET: 's' }, ['AUTH_OIDC_ID']],
    [{ AUTH_GITHUB_SECRET: 's' }, ['AUTH_GITHUB_ID']],
    [{ AUTH_GOOGLE_ID: 'x' }, ['AUTH_GOOGLE_SECRET']],
    [
      { AUTH_MICROSOFT_ENTRA_ID_ISSUER: 'https://login.microsoftonline.com/t/v2.0' },
      ['AUTH_MICROSOFT_ENTRA_ID_ID', 'AUTH_MICROSOFT_ENTRA_ID_SECRET'],
    ],
  ])('half given (%j) stops the start naming %j', (env, missing) => {
    const found = problems(env);
    expect(found.map((problem) => problem.split(':')[0]).sort()).toEqual([...missing].sort());
    for (const problem of found) expect(problem).toMatch(/e\.g\. [A-Z_]+=\S/);
  });

  it('an issuer over plain http is taken only on this machine', () => {
    expect(
      problems({
        AUTH_OIDC_ISSUER: 'http://127.0.0.1:4000',
        AUTH_OIDC_ID: 'x',
        AUTH_OIDC_SECRET: 'y',
      }),
    ).toEqual([]);
    expect(
      problems({
        AUTH_OIDC_ISSUER: 'http://idp.example.com',
        AUTH_OIDC_ID: 'x',
        AUTH_OIDC_SECRET: 'y',
      }),
    ).toEqual([expect.stringMatching(/^AUTH_OIDC_ISSUER: must be an https:\/\/ URL/)]);
  });

  it('a secret comes from a file too, and never appears in a problem', () => {
    const result = parseConfig({
      ...base,
      AUTH_GITHUB_ID: 'gh-id',
      AUTH_GITHUB_SECRET_FILE: '/nonexistent/github-secret',
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems.join('\n')).toContain(
      'AUTH_GITHUB_SECRET_FILE: cannot read /nonexistent/github-secret',
    );
  });
});
