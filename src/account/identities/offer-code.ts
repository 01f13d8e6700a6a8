import type { FastifyReply, FastifyRequest } from 'fastify';
import { fromStore, type AuthRequestContext } from '../../auth/request/request-context.js';
import { SignInCheckRefused, type SignedInUser } from '../../auth/signin/sign-in-check.js';
import type { WireKit, WireRoute } from '../../auth/way-in.js';
import { HttpError } from '../../http/errors.js';
import type { MailQueue } from '../../mail/mail-queue.js';
import type { User, UserStore } from '../../users/store.js';
import type { MailRequestLimiter } from '../mail-limits.js';
import { expiresIn } from '../model/secret-mail.js';
import { consumeById, issue, matchCode } from '../model/secrets.js';
import { linkIn, type IdentityLinkPorts, type ProviderNames } from './identity-links.js';
import { findOffer, linkOfferTtlSeconds, takeOffer } from './identity-store.js';
import { heldOffer } from './link-offer.js';

/*
 * The third proof of the account an identity is offered to (beside its password or passkey): a
 * code mailed to the account's address. On the sign-in page the offer's browser asks for one
 * (`action=send`), then posts it back (`action=confirm`, `code`); a right code links the
 * identity, and the identity signs in through the checks a right password goes through (a second
 * factor still asked for). Both posts go through Auth.js's credentials callback: its CSRF check,
 * the sign-in door, and its answers (`error=CredentialsSignin&code=identity_code_…`).
 */

export interface OfferCodeDeps extends IdentityLinkPorts {
  users: Pick<UserStore, 'findById'>;
  names: ProviderNames;
  mail: MailQueue | undefined;
  mailRequests: Pick<MailRequestLimiter, 'chargeAccount'>;
  log: { info(fields: object, message: string): void };
}

type Offer = NonNullable<Awaited<ReturnType<typeof findOffer>>>;
type Proceed = (user: User, firstProof: string) => Promise<SignedInUser | null>;

function refuse(context: AuthRequestContext, code: string): never {
  context.signInResult = 'invalid';
  throw new SignInCheckRefused(code);
}

/** Mails the offered account a code, within its share of mail; the page then asks for it. */
async function send(deps: OfferCodeDeps, user: User, offer: Offer, context: AuthRequestContext) {
  const mail = deps.mail;
  if (mail === undefined) return refuse(context, 'identity_code_unavailable');
  try {
    await deps.mailRequests.chargeAccount(user.id);
  } catch (error) {
    if (error instanceof HttpError && error.code === 'rate_limited')
      return refuse(context, 'identity_code_limited');
    throw error;
  }
  const at = deps.now();
  await fromStore(context, () =>
    deps.db.transaction().execute(async (trx) => {
      const issued = await issue(
        trx,
        {
          purpose: 'identity_link',
          userId: user.id,
          email: user.email,
          credentialVersion: user.credentialVersion,
          ttlSeconds: linkOfferTtlSeconds,
        },
        at,
      );
      await mail.enqueue(trx, {
        kind: 'identity-link-code',
        to: user.email,
        values: {
          ...(user.name !== '' && { name: user.name }),
          code: issued.code ?? '',
          providerName: deps.names(offer.provider),
          ...expiresIn(linkOfferTtlSeconds),
        },
        expiresAt: new Date(issued.expiresAt),
      });
    }),
  );
  deps.log.info({ userId: user.id, provider: offer.provider }, 'identity link code mailed');
  return refuse(context, 'identity_code_sent');
}

/** A right code links the identity, which then signs in; five wrong ones spend the code. */
async function confirm(
  deps: OfferCodeDeps,
  request: { user: User; offer: Offer; token: string; typed: unknown },
  context: AuthRequestContext,
  proceed: Proceed,
): Promise<SignedInUser | null> {
  const { user, offer } = request;
  const at = deps.now();
  const linked = await fromStore(context, () =>
    deps.db.transaction().execute(async (trx) => {
      const code = typeof request.typed === 'string' ? request.typed : '';
      const match = await matchCode(trx, { purpose: 'identity_link', email: user.email, code }, at);
      if (match === null || !(await consumeById(trx, match.id, 'identity_link', at))) return null;
      const taken = await takeOffer(trx, request.token, user.id, at);
      if (taken === null) return null;
      const client = {
        ip: context.clientIp,
        device: context.userAgent ?? '',
        origin: context.origin,
      };
      return linkIn(trx, deps, user, taken, client);
    }),
  );
  if (linked === null) return refuse(context, 'identity_code_invalid');
  if (linked === 'taken') return refuse(context, 'identity_offer_expired');
  deps.log.info({ userId: user.id, provider: offer.provider }, 'identity linked by a mailed code');
  return proceed(user, `identity:${offer.provider}`);
}

/** `POST /api/auth/callback/identity-offer`: `action=send`, or `action=confirm` with `code`. */
export function offerCodeRoute(deps: OfferCodeDeps): WireRoute {
  return {
    action: 'callback/identity-offer',
    methods: ['POST'],
    signsIn: true,
    async handler(request: FastifyRequest, reply: FastifyReply, kit: WireKit) {
      const body = kit.guardPost(request);
      const token = heldOffer(request.headers.cookie, kit.site(request).secure);
      const offer = token === undefined ? null : await findOffer(deps.db, token, deps.now());
      return kit.signIn(request, reply, body, {
        detail: { method: 'identity', provider: offer?.provider ?? null, proof: 'mailed code' },
        async authorize(credentials, context, proceed) {
          const user = offer === null ? null : await deps.users.findById(offer.userId);
          if (offer === null || token === undefined || user === null || user.disabled)
            return refuse(context, 'identity_offer_expired');
          if (credentials.action === 'send') return send(deps, user, offer, context);
          return confirm(deps, { user, offer, token, typed: credentials.code }, context, proceed);
        },
      });
    },
  };
}
