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
import { personOf, type ProviderPerson } from './providers.js';
import { issuerOf } from '../../config/identity-providers.js';

/*
 * What an identity provider's sign-in signs in, once Auth.js has checked the provider's answer
 * (adoption spec §1). An identity is (provider, issuer, subject), never an address:
 * - a known identity signs its account in, through the checks a right password goes through
 *   (a second factor, enrolment, a verified address), unless the account is disabled;
 * - an unknown one whose address belongs to an account gets no session: it is offered to that
 *   account, and linked once this browser proves the account (./link-offer.ts); an address the
 *   provider does not assert as verified is refused, never looked up, never an account's;
 * - an unknown one with an unknown address makes an account only where sign-up is open;
 * - a link asked from the account page (the session's intent, ./link-offer.ts) links an unknown
 *   identity to that account at once when the session is recent, else offers it.
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
  deps: ProviderJudgeDeps;
  setting: IdentityProviderSetting;
  context: AuthRequestContext;
  proceed: (user: User, firstProof: string) => Promise<SignedInUser | null>;
  held: HeldSession | null;
  /** Set-Cookie lines for the answer (the link offer). */
  offered: (token: string) => void;
}

/**
 * Where a refusal sends the browser, noted on the request as the Auth.js error it is (an
 * outcome, `invalid`, never an error of ours).
 */
function refusal(judging: Judging, error: string, code?: string): ProviderVerdict {
  judging.context.signInResult = 'invalid';
  judging.context.authError ??= error;
  return {
    redirect: refusalUrl(judging.context.origin, {
      error,
      ...(code !== undefined && { code }),
      provider: judging.setting.id,
    }),
  };
}

function refuse(judging: Judging, code: Refusal, why: object = {}): ProviderVerdict {
  const { context, setting } = judging;
  judging.deps.log.info(
    { reason: code, provider: setting.id, clientIp: context.clientIp, ...why },
    'provider sign-in refused',
  );
  return refusal(judging, 'AccessDenied', code);
}

const clientOf = (context: AuthRequestContext) => ({
  ip: context.clientIp,
  device: context.userAgent ?? '',
  origin: context.origin,
});

/** Signs `user` in by its identity: the account's rules, then the checks. */
async function signInAs(judging: Judging, user: User | null): Promise<ProviderVerdict> {
  if (user === null || user.disabled)
    return refuse(judging, 'account_disabled', { userId: user?.id });
  const signedIn = await judging.proceed(user, `identity:${judging.setting.id}`);
  return signedIn === null ? refusal(judging, 'CredentialsSignin', 'credentials') : { signedIn };
}

/** A new account from the identity (sign-up open): no password, the address as asserted. */
async function signUp(judging: Judging, identity: ProviderIdentity, person: ProviderPerson) {
  const { deps, context } = judging;
  const email = person.email;
  if (email === null) return refuse(judging, 'identity_no_address');
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
    await linkIn(trx, deps, noticed, identity, clientOf(context), true);
    return account.userId;
  });
  // The address was taken meanwhile: as if it had been when we looked.
  if (created === null) return refuse(judging, 'identity_no_account', { race: true });
  deps.log.info({ userId: created, provider: identity.provider }, 'account created by a provider');
  return signInAs(judging, await deps.users.findById(created));
}

/** An offer of the identity to `userId`'s account, waiting for this browser to prove it. */
async function offer(
  judging: Judging,
  userId: string,
  identity: ProviderIdentity,
  code?: string,
): Promise<ProviderVerdict> {
  const { deps, context } = judging;
  judging.offered(await offerIdentity(deps.db, userId, identity, deps.now()));
  deps.log.info(
    { provider: identity.provider, userId, clientIp: context.clientIp },
    'identity offered for linking: the account must be proven first',
  );
  return refusal(judging, 'OAuthAccountNotLinked', code);
}

/**
 * A browser signed in to an account: recently, the identity is linked to it at once; else it
 * is offered, and the account proven again first. Null: no such account any more.
 */
async function linkToHeld(
  judging: Judging,
  held: HeldSession,
  identity: ProviderIdentity,
): Promise<ProviderVerdict | null> {
  const { deps, context } = judging;
  const [until, holder] = await Promise.all([
    deps.recentUntil(held.sessionId),
    deps.users.findById(held.userId),
  ]);
  if (holder === null) return null;
  if (until === null || deps.now() >= until)
    return offer(judging, holder.id, identity, 'reauthenticate');
  const linked = await deps.db
    .transaction()
    .execute((trx) => linkIn(trx, deps, holder, identity, clientOf(context)));
  if (linked === 'taken') return refuse(judging, 'identity_linked_elsewhere');
  return signInAs(judging, holder);
}

/** An identity nobody has linked yet. */
async function unknownIdentity(
  judging: Judging,
  identity: ProviderIdentity,
  person: ProviderPerson,
): Promise<ProviderVerdict> {
  const { deps, setting } = judging;
  if (judging.held !== null) {
    const verdict = await linkToHeld(judging, judging.held, identity);
    if (verdict !== null) return verdict;
  }
  // An address the provider does not vouch for is no address here: never looked up (whether an
  // account holds it is nobody's business), never linked, never an account's (a pre-hijack).
  if (person.email !== null && !person.emailVerified)
    return refuse(judging, 'identity_address_unverified');
  const holding = person.email === null ? null : await accountHolding(deps.db, person.email);
  if (holding !== null) return offer(judging, holding.id, identity);
  const open = setting.signup === undefined ? deps.signupOpen : setting.signup === 'open';
  if (!open) return refuse(judging, 'identity_no_account');
  return signUp(judging, identity, person);
}

export function createProviderJudge(deps: ProviderJudgeDeps) {
  return async function judge(
    setting: IdentityProviderSetting,
    profile: Record<string, unknown>,
    judging: Omit<Judging, 'setting' | 'deps'>,
  ): Promise<ProviderVerdict> {
    const full = { ...judging, setting, deps };
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
