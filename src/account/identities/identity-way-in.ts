import type { FastifyRequest } from 'fastify';
import type { WayIn, WireKit, WireRoute } from '../../auth/way-in.js';
import type { IdentityProviderSetting } from '../../config/identity-providers.js';
import { isSecure } from '../../auth/request/request-site.js';
import type { UserStore } from '../../users/store.js';
import { createAccountStore } from '../model/account-store.js';
import type { AccountWayIn } from '../second-factors.js';
import type { IdentityLinkPorts } from './identity-links.js';
import { identityNotice } from './identity-notices.js';
import { findOffer } from './identity-store.js';
import { createOfferTaker, heldOffer, offerSetCookie } from './link-offer.js';
import { createProviderJudge } from './provider-sign-in.js';
import { authjsProvider } from './providers.js';

/*
 * Sign-in with identity providers as a way in (adoption spec §1): Auth.js's own providers for
 * the protocol, two routes each on Auth.js's wire (`signin/{id}` and `callback/{id}`, so
 * `signIn("github")` from next-auth works unchanged), the judge of who a callback signs in, a
 * button each on the sign-in page with the words of every refusal, and the link an offer waits
 * for once this browser proves the account.
 */

export interface IdentityWayInPorts extends IdentityLinkPorts {
  users: Pick<UserStore, 'findById'>;
  identityProviders: readonly IdentityProviderSetting[];
  identityProviderTimeoutSeconds: number;
  signupOpen: boolean;
  reauthMaxAgeSeconds: number;
  /** Whether AUTH_URL is https (the cookies' prefix), else the request's scheme. */
  publicOrigin: string | undefined;
  log: {
    info(fields: object, message: string): void;
    error(fields: object, message: string): void;
  };
}

/** Auth.js's error types a provider sign-in's refusals and failures raise: outcomes, not bugs. */
const providerRefusals = [
  'AccessDenied',
  'OAuthAccountNotLinked',
  'OAuthCallbackError',
  'OAuthSignInError',
  'InvalidCheck',
  'OAuthProfileParseError',
  'CallbackRouteError',
  'SignInError',
];

export function createIdentityWayIn(ports: IdentityWayInPorts): AccountWayIn {
  const settings = ports.identityProviders;
  if (settings.length === 0) return { wayIn: { id: 'identities' } };
  const byId = new Map(settings.map((setting) => [setting.id as string, setting]));
  const names = (id: string) => byId.get(id)?.name ?? id;
  const store = createAccountStore(ports.db);
  const judge = createProviderJudge({
    ...ports,
    names,
    async recentUntil(sessionId) {
      const provedAt = await store.provedAt(sessionId);
      return provedAt === null ? null : provedAt + ports.reauthMaxAgeSeconds * 1000;
    },
  });
  const timeoutMs = ports.identityProviderTimeoutSeconds * 1000;
  const secure = (request: FastifyRequest) => isSecure(request, ports.publicOrigin);

  function routes(setting: IdentityProviderSetting): WireRoute[] {
    return [
      {
        action: `signin/${setting.id}`,
        methods: ['POST'],
        signsIn: true,
        handler: (request, reply, kit) =>
          kit.toProvider(request, reply, { failedAs: 'OAuthSignInError' }),
      },
      {
        action: `callback/${setting.id}`,
        methods: ['GET'],
        async handler(request, reply, kit: WireKit) {
          const held = await kit.heldSession(request);
          const cookies: string[] = [];
          return kit.toProvider(request, reply, {
            cookies,
            detail: { method: 'identity', provider: setting.id },
            failedAs: 'OAuthCallbackError',
            provider: (signIn, context, proceed) =>
              judge(setting, signIn.profile, {
                context,
                proceed,
                held,
                offered: (token) => cookies.push(offerSetCookie(token, secure(request))),
              }),
          });
        },
      },
    ];
  }

  const wayIn: WayIn = {
    id: 'identities',
    authjsProviders: settings.map((setting) => authjsProvider(setting, timeoutMs)),
    refusalErrors: providerRefusals,
    routes: settings.flatMap(routes),
    async signInPage(request, params) {
      const token = heldOffer(request.headers.cookie, secure(request));
      let offered = false;
      try {
        offered = token !== undefined && (await findOffer(ports.db, token, ports.now())) !== null;
      } catch {
        return 'unavailable';
      }
      const notice = identityNotice(
        params,
        (id) => (id === null ? 'the sign-in provider' : names(id)),
        offered,
      );
      return {
        providers: settings.map(({ id, name }) => ({ id, name })),
        ...(notice !== undefined && { notice }),
      };
    },
    afterSignIn: createOfferTaker({ ...ports, names }),
  };
  return { wayIn };
}
