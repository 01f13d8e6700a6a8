import * as z from 'zod/mini';
import { isLoopbackOrigin } from './auth.js';
import { integer, trimmedText } from './read/kinds.js';
import { noted } from './read/notes.js';

/** The identity providers Gatehouse signs in with, by Auth.js's provider ids. */
export const providerKinds = ['oidc', 'github', 'google', 'microsoft-entra-id', 'gitlab'] as const;
export type ProviderKind = (typeof providerKinds)[number];

/** One configured provider, as the identities way in builds it (src/account/identities/). */
export const publicIssuers: Record<string, string> = {
  github: 'https://github.com',
  google: 'https://accounts.google.com',
  'microsoft-entra-id': 'https://login.microsoftonline.com/common/v2.0',
  gitlab: 'https://gitlab.com',
};

/**
 * Where a sign-in with each provider sends the browser (its authorization endpoint's origin):
 * the issuer's, or GitHub's (its Enterprise base URL's). The pages' CSP lets their forms lead
 * there (src/pages/page-csp.ts).
 */
export const authorizationOrigins = (settings: readonly IdentityProviderSetting[]): string[] => [
  ...new Set(settings.map((setting) => new URL(issuerOf(setting)).origin)),
];

/** Where the provider's subjects are unique: its issuer, or the service's base URL. */
export const issuerOf = (setting: IdentityProviderSetting): string =>
  setting.issuer ?? publicIssuers[setting.id] ?? '';

export interface IdentityProviderSetting {
  /** Auth.js's provider id: `signIn("github")`, `/api/auth/callback/github`. */
  id: ProviderKind;
  /** What the sign-in page's button and the account page call it. */
  name: string;
  clientId: string;
  clientSecret: string;
  /** The OpenID Connect issuer (oidc, microsoft-entra-id); a GitHub Enterprise base URL. */
  issuer?: string;
  /** AUTH_<ID>_SIGNUP: new people may make an account this way; undefined: as SIGNUP says. */
  signup: 'open' | 'closed' | undefined;
}

/** Auth.js's environment prefix for a provider: AUTH_MICROSOFT_ENTRA_ID_ID and the like. */
export const envPrefix = (id: ProviderKind) => `AUTH_${id.toUpperCase().replaceAll('-', '_')}`;

const signup = () =>
  z.optional(z.enum(['open', 'closed'], { error: 'must be open or closed (unset: as SIGNUP)' }));

/** An issuer or base URL: https, or http to this machine only (a provider run beside it). */
function isIssuerUrl(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '')
    return false;
  return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackOrigin(url.origin));
}

const builtInNames: Record<ProviderKind, string> = {
  oidc: 'Single sign-on',
  github: 'GitHub',
  google: 'Google',
  'microsoft-entra-id': 'Microsoft',
  gitlab: 'GitLab',
};

/** What a provider reads besides its id and secret, and its example values. */
const extras: Record<ProviderKind, { issuer?: 'required' | 'optional'; example: string }> = {
  oidc: { issuer: 'required', example: 'https://login.example.com' },
  github: { issuer: 'optional', example: 'https://github.example.com' },
  google: { example: '' },
  'microsoft-entra-id': {
    issuer: 'optional',
    example: 'https://login.microsoftonline.com/<tenant id>/v2.0',
  },
  gitlab: { example: '' },
};

/** The name of the issuer variable: Auth.js's `_ISSUER`, and GitHub's Enterprise base URL. */
export const issuerVariable = (id: ProviderKind) =>
  id === 'github' ? 'AUTH_GITHUB_ENTERPRISE_URL' : `${envPrefix(id)}_ISSUER`;

const clientId = () => noted(trimmedText(), { default: 'none (off)', example: 'gatehouse-client' });
const clientSecret = () => noted(trimmedText(), { example: 'a-long-client-secret' });
const signupSetting = () => noted(signup(), { default: 'as SIGNUP', example: 'open' });
const issuer = (id: ProviderKind, required: boolean) =>
  noted(trimmedText(), {
    ...(!required && { default: 'the provider’s public service' }),
    example: extras[id].example,
  });

/** Every variable, by Auth.js's names (each provider's `_ID`, `_SECRET`, …). */
const shape = {
  // Seconds each call to a provider may take (discovery, token, profile) before the sign-in
  // fails with a page: a provider that is down never holds a sign-in.
  IDENTITY_PROVIDER_TIMEOUT: integer(1, 60, 10),
  AUTH_OIDC_ISSUER: issuer('oidc', true),
  AUTH_OIDC_ID: clientId(),
  AUTH_OIDC_SECRET: clientSecret(),
  AUTH_OIDC_NAME: noted(trimmedText(), { default: builtInNames.oidc, example: 'Acme SSO' }),
  AUTH_OIDC_SIGNUP: signupSetting(),
  AUTH_GITHUB_ID: clientId(),
  AUTH_GITHUB_SECRET: clientSecret(),
  AUTH_GITHUB_ENTERPRISE_URL: issuer('github', false),
  AUTH_GITHUB_SIGNUP: signupSetting(),
  AUTH_GOOGLE_ID: clientId(),
  AUTH_GOOGLE_SECRET: clientSecret(),
  AUTH_GOOGLE_SIGNUP: signupSetting(),
  AUTH_MICROSOFT_ENTRA_ID_ID: clientId(),
  AUTH_MICROSOFT_ENTRA_ID_SECRET: clientSecret(),
  AUTH_MICROSOFT_ENTRA_ID_ISSUER: issuer('microsoft-entra-id', false),
  AUTH_MICROSOFT_ENTRA_ID_SIGNUP: signupSetting(),
  AUTH_GITLAB_ID: clientId(),
  AUTH_GITLAB_SECRET: clientSecret(),
  AUTH_GITLAB_SIGNUP: signupSetting(),
};

type Env = Record<string, string | undefined>;
type Ctx = { addIssue(issue: { code: 'custom'; path: string[]; message: string }): void };

/** A half-given provider stops start-up, naming what is missing. */
function checkProvider(id: ProviderKind, e: Env, ctx: Ctx): void {
  const prefix = envPrefix(id);
  const issuerName = issuerVariable(id);
  const given = [`${prefix}_ID`, `${prefix}_SECRET`, issuerName].filter((name) => e[name]);
  const needed = [`${prefix}_ID`, `${prefix}_SECRET`];
  if (extras[id].issuer === 'required') needed.push(issuerName);
  if (given.length > 0) {
    for (const name of needed.filter((name) => e[name] === undefined))
      ctx.addIssue({
        code: 'custom',
        path: [name],
        message: `is needed with ${given.join(' and ')}: ${id} sign-in takes ${needed.join(', ')}, e.g. ${name}=${name.endsWith('_ISSUER') ? extras[id].example : name.endsWith('_SECRET') ? 'the secret the provider issued' : 'the client id the provider issued'}`,
      });
  }
  const issuer = e[issuerName];
  if (issuer !== undefined && !isIssuerUrl(issuer))
    ctx.addIssue({
      code: 'custom',
      path: [issuerName],
      message: `must be an https:// URL without a query (http:// only to this machine), e.g. ${issuerName}=${extras[id].example}`,
    });
}

function settingOf(id: ProviderKind, e: Env): IdentityProviderSetting | undefined {
  const prefix = envPrefix(id);
  const clientId = e[`${prefix}_ID`];
  const clientSecret = e[`${prefix}_SECRET`];
  if (clientId === undefined || clientSecret === undefined) return undefined;
  const issuer = e[issuerVariable(id)];
  const signupValue = e[`${prefix}_SIGNUP`];
  return {
    id,
    name: (id === 'oidc' ? e.AUTH_OIDC_NAME : undefined) ?? builtInNames[id],
    clientId,
    clientSecret,
    // An OpenID Connect issuer exactly as given (its discovery document must name the same);
    // a base URL without its trailing slash.
    ...(issuer !== undefined && { issuer: id === 'github' ? issuer.replace(/\/+$/, '') : issuer }),
    signup: signupValue === 'open' || signupValue === 'closed' ? signupValue : undefined,
  };
}

/**
 * Sign-in with identity providers (adoption spec §1), by Auth.js's own variable names: the
 * generic OpenID Connect provider (AUTH_OIDC_ISSUER, AUTH_OIDC_ID, AUTH_OIDC_SECRET,
 * AUTH_OIDC_NAME) and Auth.js's built-ins as AUTH_<ID>_ID / AUTH_<ID>_SECRET. Each secret may
 * come from a file (`_FILE`). A provider half given stops start-up naming what is missing.
 */
export const identityProviders = z.pipe(
  z.object(shape).check(
    z.superRefine((e, ctx) => {
      for (const id of providerKinds) checkProvider(id, e as unknown as Env, ctx as Ctx);
    }),
  ),
  z.transform((e) => ({
    /** In the order of providerKinds: the sign-in page's buttons follow it. */
    identityProviders: providerKinds.flatMap((id) => settingOf(id, e as unknown as Env) ?? []),
    identityProviderTimeoutSeconds: e.IDENTITY_PROVIDER_TIMEOUT,
  })),
);
