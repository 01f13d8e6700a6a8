import { customFetch } from '@auth/core';
import GitHub from '@auth/core/providers/github';
import GitLab from '@auth/core/providers/gitlab';
import Google from '@auth/core/providers/google';
import MicrosoftEntraID, {
  type MicrosoftEntraIDProfile,
} from '@auth/core/providers/microsoft-entra-id';
import type { Provider } from '@auth/core/providers';
import { publicIssuers, type IdentityProviderSetting } from '../../config/identity-providers.js';
import { readEmail } from '../../users/email.js';
import { boundedFetch } from './bounded-fetch.js';

/*
 * The configured identity providers as Auth.js's own provider objects (Auth.js speaks the
 * protocol: discovery, PKCE, state, nonce, the code exchange, the ID token), each with every
 * check on, its calls bounded (./bounded-fetch.ts), and what it says of the person read into
 * one shape with the address's verification as the provider asserts it, never assumed.
 */

/** Who the provider says signed in, read from its profile. */
export interface ProviderPerson {
  subject: string;
  /** Normalised; null when none, or not an address. */
  email: string | null;
  /** The provider asserts the address belongs to the person. */
  emailVerified: boolean;
  name: string;
}

const isTrue = (value: unknown) => value === true || value === 'true';
const text = (value: unknown) => (typeof value === 'string' ? value : undefined);

/** The profile's person, by the provider's kind; null when it names nobody. */
export function personOf(
  setting: IdentityProviderSetting,
  profile: Record<string, unknown>,
): ProviderPerson | null {
  const id = setting.id;
  const rawSubject = id === 'github' || id === 'gitlab' ? profile.id : profile.sub;
  const subject =
    typeof rawSubject === 'number' && Number.isSafeInteger(rawSubject)
      ? String(rawSubject)
      : text(rawSubject);
  if (subject === undefined || subject === '' || subject.length > 255) return null;
  const rawEmail = text(profile.email);
  const email = rawEmail === undefined ? null : readEmail(rawEmail);
  const verified =
    id === 'gitlab'
      ? typeof profile.confirmed_at === 'string'
      : id === 'microsoft-entra-id'
        ? // Entra's `email` is whatever a tenant admin typed (nOAuth): only its own
          // "domain owner verified" claim says more.
          isTrue(profile.xms_edov)
        : isTrue(profile.email_verified);
  const name = text(profile.name) ?? text(profile.login) ?? text(profile.preferred_username) ?? '';
  return { subject, email, emailVerified: email !== null && verified, name: name.slice(0, 200) };
}

interface GitHubEmail {
  email?: unknown;
  primary?: unknown;
  verified?: unknown;
}

/**
 * GitHub's profile with the address GitHub says is the person's primary one and verified
 * (`email_verified`); the public profile's address alone is never taken as verified.
 */
function githubUserinfo(apiBaseUrl: string, fetcher: typeof fetch) {
  return async ({ tokens }: { tokens: { access_token?: string } }) => {
    const headers = {
      Authorization: `Bearer ${tokens.access_token ?? ''}`,
      'User-Agent': 'gatehouse',
      Accept: 'application/vnd.github+json',
    };
    const profileAnswer = await fetcher(`${apiBaseUrl}/user`, { headers });
    if (!profileAnswer.ok) throw new Error(`GitHub's /user answered ${profileAnswer.status}`);
    const profile = (await profileAnswer.json()) as Record<string, unknown>;
    const emailsAnswer = await fetcher(`${apiBaseUrl}/user/emails`, { headers });
    const emails = emailsAnswer.ok ? ((await emailsAnswer.json()) as unknown) : [];
    const primary = Array.isArray(emails)
      ? (emails as GitHubEmail[]).find((entry) => entry.primary === true)
      : undefined;
    return {
      ...profile,
      email: primary?.email ?? profile.email ?? null,
      email_verified: primary !== undefined && primary.verified === true,
    };
  };
}

/** One provider as Auth.js takes it. */
export function authjsProvider(setting: IdentityProviderSetting, timeoutMs: number): Provider {
  const fetcher = boundedFetch(timeoutMs);
  const common = {
    clientId: setting.clientId,
    clientSecret: setting.clientSecret,
    name: setting.name,
    allowDangerousEmailAccountLinking: false,
    [customFetch]: fetcher,
  };
  const oidcChecks = ['pkce', 'state', 'nonce'] as const;
  switch (setting.id) {
    case 'oidc':
      return {
        id: 'oidc',
        name: setting.name,
        type: 'oidc',
        issuer: setting.issuer ?? '',
        authorization: { params: { scope: 'openid email profile' } },
        // The ID token is checked (signature, nonce, audience), then the person is read from
        // userinfo (its `sub` must match): many providers keep the address out of the ID token.
        options: { ...common, checks: [...oidcChecks], idToken: false },
      } as Provider;
    case 'github': {
      const baseUrl = setting.issuer;
      const apiBaseUrl = baseUrl === undefined ? 'https://api.github.com' : `${baseUrl}/api/v3`;
      return GitHub({
        ...common,
        checks: ['pkce', 'state'],
        ...(baseUrl !== undefined && { enterprise: { baseUrl } }),
        userinfo: { request: githubUserinfo(apiBaseUrl, fetcher) },
      } as Parameters<typeof GitHub>[0]);
    }
    case 'google':
      return Google({ ...common, checks: [...oidcChecks] });
    case 'microsoft-entra-id': {
      const provider = MicrosoftEntraID({
        ...common,
        checks: [...oidcChecks],
        issuer: setting.issuer ?? publicIssuers['microsoft-entra-id'],
        // Auth.js's own reads a photo from Microsoft Graph with an unbounded fetch: not needed.
        profile: (profile: MicrosoftEntraIDProfile) => ({
          id: profile.sub,
          name: profile.name,
          email: profile.email,
          image: null,
        }),
      });
      // Ours in place of its own (a tenant rewrite of the discovery document, unbounded), on the
      // provider as in its options, whichever Auth.js reads; a tenant's issuer needs no rewrite.
      (provider as unknown as Record<symbol, unknown>)[customFetch] = fetcher;
      return provider;
    }
    case 'gitlab':
      return GitLab({ ...common, checks: ['pkce', 'state'] });
  }
}
