import { AuthError } from '@auth/core/errors';
import type { FastifyRequest } from 'fastify';
import {
  interrupt,
  StoreUnavailableError,
  type AuthRequestContext,
} from '../../auth/request/request-context.js';
import type { WayIn, WireKit, WireRoute } from '../../auth/way-in.js';
import type { IdentityProviderSetting } from '../../config/identity-providers.js';
import { isSecure } from '../../auth/request/request-site.js';
import type { UserStore } from '../../users/store.js';
import { createAccountStore } from '../model/account-store.js';
import type { AccountWayIn } from '../second-factors.js';
import type { IdentityLinkPorts } from './identity-links.js';
import { identityNotice } from './identity-notices.js';
import {
  createOfferTaker,
  heldOffer,
  intendsLink,
  intentSetCookie,
  offerSetCookie,
} from './link-offer.js';
import { offerCodeRoute } from './offer-code.js';
import type { MailRequestLimiter } from '../mail-limits.js';
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
  /** The account's share of mail, which a link code is charged to. */
  mailRequests: Pick<MailRequestLimiter, 'chargeAccount'>;
  /** The identity providers people may sign in with, and how long each call may take. */
  identityProviders: readonly IdentityProviderSetting[];
  identityProviderTimeoutSeconds: number;
  /** SIGNUP=open: a provider's sign-in may make an account (AUTH_<ID>_SIGNUP overrides it). */
  signupOpen: boolean;
  /** REAUTH_MAX_AGE: a browser signed in this recently links a new identity at once. */
  reauthMaxAgeSeconds: number;
  /** AUTH_URL, which fixes the scheme the cookies are named for. */
  publicOrigin: string | undefined;
  log: {
    info(fields: object, message: string): void;
    error(fields: object, message: string): void;
  };
}

/** `work`, with a failure that is no Auth.js refusal marked as the store's (503, logged). */
async function fromStoreUnlessRefused<T>(
  context: AuthRequestContext,
  work: () => Promise<T>,
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof AuthError || error instanceof StoreUnavailableError) throw error;
    interrupt(context, { kind: 'unavailable', error });
    throw new StoreUnavailableError(error);
  }
}

/** Auth.js's error types a provider sign-in's refusals and failures raise: outcomes, not bugs. */
const providerRefusals = [
  // Ours, words on the sign-in page (./provider-sign-in.ts).
  'AccessDenied',
  'OAuthAccountNotLinked',
  // The browser's: a callback replayed, tampered with, cancelled at the provider.
  'OAuthCallbackError',
  'InvalidCheck',
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
  /** The post's `intent=link` (a form's field; Auth.js ignores it). */
  const linkAsked = (request: FastifyRequest) =>
    Buffer.isBuffer(request.body) &&
    new URLSearchParams(request.body.toString('utf8')).get('intent') === 'link';

  function routes(setting: IdentityProviderSetting): WireRoute[] {
    return [
      {
        action: `signin/${setting.id}`,
        methods: ['POST'],
        signsIn: true,
        async handler(request, reply, kit) {
          // The account page's "Link …" asks for a link from the session it is in.
          const held = linkAsked(request) ? await kit.heldSession(request) : null;
          return kit.toProvider(request, reply, {
            failedAs: 'OAuthSignInError',
            ...(held !== null && { cookies: [intentSetCookie(held.sessionId, secure(request))] }),
          });
        },
      },
      {
        action: `callback/${setting.id}`,
        methods: ['GET'],
        async handler(request, reply, kit: WireKit) {
          const session = await kit.heldSession(request);
          const held =
            session !== null &&
            intendsLink(request.headers.cookie, secure(request), session.sessionId)
              ? session
              : null;
          const cookies: string[] = held === null ? [] : [intentSetCookie(null, secure(request))];
          return kit.toProvider(request, reply, {
            cookies,
            detail: { method: 'identity', provider: setting.id },
            failedAs: 'OAuthCallbackError',
            // The judge's own work is the store's: a failure there is the 503 a password's
            // sign-in gets when the store does not answer (a refusal passes as it is).
            provider: (signIn, context, proceed) =>
              fromStoreUnlessRefused(context, () =>
                judge(setting, signIn.profile, {
                  context,
                  proceed,
                  held,
                  offered: (token) => cookies.push(offerSetCookie(token, secure(request))),
                }),
              ),
          });
        },
      },
    ];
  }

  const wayIn: WayIn = {
    id: 'identities',
    authjsProviders: settings.map((setting) => authjsProvider(setting, timeoutMs)),
    refusalErrors: providerRefusals,
    routes: [...settings.flatMap(routes), offerCodeRoute({ ...ports, names })],
    async signInPage(request, params) {
      // The cookie lives as long as its offer and goes with the sign-in that takes it.
      const offered = heldOffer(request.headers.cookie, secure(request)) !== undefined;
      const notice = identityNotice(
        params,
        (id) => (id === null ? 'the sign-in provider' : names(id)),
        offered,
      );
      const code = params.get('code');
      return {
        providers: settings.map(({ id, name }) => ({ id, name })),
        ...(notice !== undefined && { notice }),
        // The offer's browser may prove the account by a mailed code (./offer-code.ts).
        ...(offered &&
          ports.mail !== undefined && {
            identityOffer: {
              askCode: code === 'identity_code_sent' || code === 'identity_code_invalid',
            },
          }),
      };
    },
    afterSignIn: createOfferTaker({ ...ports, names }),
  };
  return { wayIn };
}
