import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { PasskeyPort } from './passkey-port.js';
import type { Throttle } from '../../auth/signin/throttle.js';
import type { Database } from '../../db/schema.js';
import type { MailQueue } from '../../mail/mail-queue.js';
import type { UserStore } from '../../users/store.js';
import type { Factor } from '../second-factors.js';
import type { Guards } from '../guards.js';
import { checkAssertion } from './assertion.js';
import { createPasskeyRoutes } from './auth-routes.js';
import { createPasskeyStore } from './passkey-store.js';
import type { PagePaths } from '../paths.js';

export interface PasskeyDeps {
  db: Kysely<Database>;
  users: UserStore;
  throttle: Throttle;
  secrets: readonly string[];
  authUrl: string | undefined;
  /** Where the pages live (ACCOUNT_PAGES_PATH): the notices' lock links. */
  pages: PagePaths;
  mail: MailQueue | undefined;
  factors: readonly Factor[];
  /** SECOND_FACTOR=required: a sign-in without user verification needs another factor. */
  secondFactorRequired?: boolean;
  now: () => number;
  log: { error(fields: object, message: string): void };
}

/** What the passkey routes need of the account routes, known once those are registered. */
export interface PasskeyGuards {
  guards: Guards;
  assertCsrf: (request: FastifyRequest, body: Record<string, unknown>) => void;
}

/**
 * Passkeys for the auth wing (its two Auth.js routes and the assertion check), bound to the
 * account wing's guards once the account routes are registered.
 */
export function createPasskeys(deps: PasskeyDeps) {
  const store = createPasskeyStore(deps.db);
  let bound: PasskeyGuards | undefined;
  const guarded = (): PasskeyGuards => {
    if (bound === undefined) throw new Error('the passkey routes ran before the account routes');
    return bound;
  };
  const routes = createPasskeyRoutes({
    db: deps.db,
    store,
    mail: deps.mail,
    now: deps.now,
    secrets: deps.secrets,
    authUrl: deps.authUrl,
    pages: deps.pages,
    guards: () => guarded().guards,
    assertCsrf: () => guarded().assertCsrf,
  });
  const port: PasskeyPort = {
    options: routes.options,
    register: routes.register,
    assert: (assertion) =>
      checkAssertion(
        {
          passkeys: store,
          users: deps.users,
          secrets: deps.secrets,
          factors: deps.factors,
          secondFactorRequired: deps.secondFactorRequired === true,
          throttle: deps.throttle,
          now: deps.now,
          log: deps.log,
        },
        assertion,
      ),
  };
  return {
    port,
    bind(guards: PasskeyGuards) {
      bound = guards;
    },
    /** Forgets answered challenges past their expiry. */
    prune: (now: number) => store.prune(now),
  };
}

export type Passkeys = ReturnType<typeof createPasskeys>;
