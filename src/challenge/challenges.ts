import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { User, UserStore } from '../users/store.js';
import {
  findChallenge,
  issueChallenge,
  spendChallenge,
  type ChallengePurpose,
} from './challenge-store.js';

export type { ChallengePurpose } from './challenge-store.js';

/**
 * The sign-in challenge, as sign-in and the ways in use it: after a right password that a check
 * refused with a code opening one, a challenge the browser holds stands for that password for a
 * few minutes, and the next post sends only what the refusal asked for.
 */
export interface SignInChallenges {
  /** `firstProof`: what it stands for, `password` unless a way in's own proof (an identity). */
  issue(
    user: Pick<User, 'id' | 'credentialVersion'>,
    purpose: ChallengePurpose,
    firstProof?: string,
  ): Promise<string>;
  /**
   * The enabled account a live challenge stands for, still at its credential version, and what
   * the challenge was issued for.
   */
  resume(
    token: string,
  ): Promise<{ user: User; purpose: ChallengePurpose; firstProof: string } | null>;
  /** Spends it: true for exactly one caller. */
  spend(token: string): Promise<boolean>;
}

export function createSignInChallenges(deps: {
  db: Kysely<Database>;
  users: Pick<UserStore, 'findById'>;
  now: () => number;
}): SignInChallenges {
  return {
    issue: (user, purpose, firstProof) =>
      issueChallenge(deps.db, user, purpose, deps.now(), firstProof),
    async resume(token) {
      const challenge = await findChallenge(deps.db, token, deps.now());
      if (challenge === null) return null;
      const user = await deps.users.findById(challenge.userId);
      // A password change or reset since voids it, as it voids sign-ins in flight.
      return user !== null &&
        !user.disabled &&
        user.credentialVersion === challenge.credentialVersion
        ? { user, purpose: challenge.purpose, firstProof: challenge.firstProof }
        : null;
    },
    spend: (token) => spendChallenge(deps.db, token, deps.now()),
  };
}
