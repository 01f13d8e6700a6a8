import type { HeldSession, ProviderVerdict } from '../../auth/way-in.js';
import type { AuthRequestContext, SignedInUser } from '../../auth/request/request-context.js';
import type { IdentityProviderSetting } from '../../config/identity-providers.js';
import { noPasswordHash } from '../../users/hasher.js';
import type { User, UserStore } from '../../users/store.js';
import { accountHolding, createAccount } from '../model/addresses.js';
import { linkIn, type IdentityLinkPorts, type ProviderNames } from './identity-links.js';
import {
  findIdentity,
  offerIdentity,
  touchIdentity,
  type ProviderIdentity,
} from './identity-store.js';
import { issuerOf, personOf, type ProviderPerson } from './providers.js';

/*
 * What an identity provider's sign-in signs in, once Auth.js has checked the provider's answer
 * (adoption spec §1). An identity is (provider, issuer, subject), never an address:
 * - a known identity signs its account in, through the checks a right password goes through
 *   (a second factor, enrolment, a verified address), unless the account is disabled;
 * - an unknown one whose address belongs to an account gets no session: it is offered to that
 *   account, and linked once this browser proves the account (./link-offer.ts); an address the
 *   provider does not assert as verified is never offered, and never makes a verified account;
 * - an unknown one with an unknown address makes an account only where sign-up is open;
 * - a browser signed in recently links an unknown identity to its own account at once.
 */

export interface ProviderJudgeDeps extends IdentityLinkPorts {
  users: Pick<UserStore, 'findById'>;
  names: ProviderNames;
  /** SIGNUP=open, which a provider's own AUTH_<ID>_SIGNUP overrides. */
  signupOpen: boolean;
  /** Until when a session counts as recent (REAUTH_MAX_AGE after its last proof); null: over. */
  recentUntil(sessionId: string): Promise<number | null>;
  log: { info(fields: object, message: string): void };
}

/** A refusal the sign-in page words: Auth.js's error type and, for AccessDenied, our code. */
export type Refusal =
  | 'identity_unreadable'
  | 'identity_no_account'
  | 'identity_no_address'
  | 'identity_address_unverified'
  | 'identity_linked_elsewhere'
  | 'account_disabled';

/** Where a refused provider sign-in sends the browser: the sign-in page, which words it. */
export function refusalUrl(
  origin: string,
  refusal: { error: string; code?: string; provider: string },
) {
  const params = new URLSearchParams({ error: refusal.error });
  if (refusal.code !== undefined) params.set('code', refusal.code);
  params.set('provider', refusal.provider);
  return `${origin}/api/auth/signin?${params}`;
}

interface Judging {
  setting: IdentityProviderSetting;
  context: AuthRequestContext;
  proceed: (user: User, firstProof: string) => Promise<SignedInUser | null>;
  held: HeldSession | null;
  /** Set-Cookie lines for the answer (the link offer). */
  offered: (token: string) => void;
}

export function createProviderJudge(deps: ProviderJudgeDeps) {
  const refuse = (judging: Judging, code: Refusal, why: object = {}): ProviderVerdict => {
    deps.log.info(
      { reason: code, provider: judging.setting.id, clientIp: judging.context.clientIp, ...why },
      'provider sign-in refused',
    );
    judging.context.signInResult = 'invalid';
    return {
      redirect: refusalUrl(judging.context.origin, {
        error: 'AccessDenied',
        code,
        provider: judging.setting.id,
      }),
    };
  };

  const client = (context: AuthRequestContext) => ({
    ip: context.clientIp,
    device: context.userAgent ?? '',
    origin: context.origin,
  });

  /** Signs `user` in by its identity: the account's rules, then the checks. */
  async function signInAs(judging: Judging, user: User | null): Promise<ProviderVerdict> {
    if (user === null || user.disabled)
      return refuse(judging, 'account_disabled', { userId: user?.id });
    const signedIn = await judging.proceed(user, `identity:${judging.setting.id}`);
    if (signedIn === null) {
      return {
        redirect: refusalUrl(judging.context.origin, {
          error: 'CredentialsSignin',
          code: 'credentials',
          provider: judging.setting.id,
        }),
      };
    }
    return { signedIn };
  }

  /** A new account from the identity (sign-up open): no password, the address as asserted. */
  async function signUp(judging: Judging, identity: ProviderIdentity, person: ProviderPerson) {
    const email = person.email;
    if (email === null) return refuse(judging, 'identity_no_address');
    const { context } = judging;
    const created = await deps.db.transaction().execute(async (trx) => {
      const account = await createAccount(trx, {
        email,
        name: person.name,
        passwordHash: noPasswordHash,
        verified: person.emailVerified,
        at: deps.now(),
        event: { ip: context.clientIp, device: context.userAgent ?? '' },
        via: { via: 'identity', provider: identity.provider },
      });
      if (account === null) return null;
      const noticed = { id: account.userId, email, name: person.name, credentialVersion: 0 };
      await linkIn(trx, deps, noticed, identity, client(context), true);
      return account.userId;
    });
    // The address was taken meanwhile: as if it had been when we looked.
    if (created === null) return refuse(judging, 'identity_no_account', { race: true });
    deps.log.info(
      { userId: created, provider: identity.provider },
      'account created by a provider',
    );
    return signInAs(judging, await deps.users.findById(created));
  }

  /** An identity nobody has linked yet. */
  async function unknownIdentity(
    judging: Judging,
    identity: ProviderIdentity,
    person: ProviderPerson,
  ): Promise<ProviderVerdict> {
    const { held, context } = judging;
    if (held !== null) {
      const until = await deps.recentUntil(held.sessionId);
      const holder = await deps.users.findById(held.userId);
      if (holder !== null && until !== null && deps.now() < until) {
        const linked = await deps.db
          .transaction()
          .execute((trx) => linkIn(trx, deps, holder, identity, client(context)));
        if (linked === 'taken') return refuse(judging, 'identity_linked_elsewhere');
        return signInAs(judging, holder);
      }
      if (holder !== null) {
        // Signed in, but not recently: the account is proven again in this browser first.
        judging.offered(await offerIdentity(deps.db, holder.id, identity, deps.now()));
        return {
          redirect: refusalUrl(context.origin, {
            error: 'OAuthAccountNotLinked',
            code: 'reauthenticate',
            provider: identity.provider,
          }),
        };
      }
    }
    const holding = person.email === null ? null : await accountHolding(deps.db, person.email);
    if (holding !== null) {
      if (!person.emailVerified)
        return refuse(judging, 'identity_address_unverified', { userId: holding.id });
      judging.offered(await offerIdentity(deps.db, holding.id, identity, deps.now()));
      deps.log.info(
        { provider: identity.provider, userId: holding.id, clientIp: context.clientIp },
        'identity offered for linking: the account must be proven first',
      );
      context.signInResult = 'invalid';
      return {
        redirect: refusalUrl(context.origin, {
          error: 'OAuthAccountNotLinked',
          provider: identity.provider,
        }),
      };
    }
    const open =
      judging.setting.signup === undefined ? deps.signupOpen : judging.setting.signup === 'open';
    if (!open) return refuse(judging, 'identity_no_account');
    return signUp(judging, identity, person);
  }

  return async function judge(
    setting: IdentityProviderSetting,
    profile: Record<string, unknown>,
    judging: Omit<Judging, 'setting'>,
  ): Promise<ProviderVerdict> {
    const full = { ...judging, setting };
    const person = personOf(setting, profile);
    if (person === null) return refuse(full, 'identity_unreadable');
    const identity: ProviderIdentity = {
      provider: setting.id,
      issuer: issuerOf(setting),
      subject: person.subject,
      email: person.email,
    };
    const known = await findIdentity(deps.db, identity);
    if (known === null) return unknownIdentity(full, identity, person);
    if (judging.held !== null && judging.held.userId !== known.userId)
      return refuse(full, 'identity_linked_elsewhere', { userId: judging.held.userId });
    await touchIdentity(deps.db, known.id, deps.now());
    return signInAs(full, await deps.users.findById(known.userId));
  };
}
