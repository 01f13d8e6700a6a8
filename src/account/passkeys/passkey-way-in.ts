import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { parseCookies } from '../../auth/cookies/cookies.js';
import type { WayIn } from '../../auth/way-in.js';
import type { SignInChallenges } from '../../challenge/challenges.js';
import type { Database } from '../../db/schema.js';
import { HttpError } from '../../http/errors.js';
import type { AccountWayIn } from '../second-factors.js';
import { createPasskeyAuthorize, passkeyPurpose } from './passkey-authorize.js';
import type { PasskeyPort } from './passkey-port.js';
import { createPasskeyStore } from './passkey-store.js';
import type { Passkeys } from './passkeys.js';
import { challengeCookieName, clearChallenge } from './webauthn-challenge.js';

/** The callback's `action` (Auth.js's WebAuthn field), from a form or JSON body. */
function passkeyActionOf(request: FastifyRequest, body: Buffer): unknown {
  const text = body.toString('utf8');
  if (!(request.headers['content-type'] ?? '').toLowerCase().includes('application/json')) {
    return new URLSearchParams(text).get('action');
  }
  // The body guard has checked it is a JSON object.
  return (JSON.parse(text) as Record<string, unknown>).action;
}

export interface PasskeyWayInDeps {
  port: PasskeyPort;
  /** The sign-in challenge a password leaves after `passkey_required`. */
  challenges: SignInChallenges | undefined;
  log: { info(fields: object, message: string): void };
}

/**
 * Passkeys as a way in: Auth.js's Passkey provider in its provider list (as Auth.js lists a
 * WebAuthn provider: `next-auth/webauthn`'s `signIn("passkey")` looks it up there before
 * anything else), its two routes, and the sign-in challenge a password leaves after
 * `passkey_required` (SECOND_FACTOR=required: a password and a passkey without user
 * verification are two factors together).
 */
export function createPasskeyWayIn(deps: PasskeyWayInDeps): WayIn {
  const authorize = createPasskeyAuthorize({
    passkeys: deps.port,
    challenges: deps.challenges,
    log: deps.log,
  });
  return {
    id: 'passkeys',
    challengeOpenedBy: { passkey_required: passkeyPurpose },
    // A wrong assertion is Auth.js's Passkey provider's refusal: an outcome, not an error.
    refusalErrors: ['WebAuthnVerificationError'],
    providers: (authUrl) => ({
      passkey: {
        id: 'passkey',
        name: 'Passkey',
        type: 'webauthn',
        signinUrl: `${authUrl}/signin/passkey`,
        callbackUrl: `${authUrl}/callback/passkey`,
      },
    }),
    routes: [
      {
        action: 'webauthn-options/passkey',
        methods: ['GET'],
        handler: (request, reply) => deps.port.options(request, reply),
      },
      {
        /**
         * As Auth.js's Passkey provider takes it (`action`, `data`, `csrfToken`, `callbackUrl`):
         * `authenticate` signs in through the credentials callback (the same CSRF check, door,
         * session and answer as a password), `register` adds a passkey to the signed-in account.
         */
        action: 'callback/passkey',
        methods: ['POST'],
        signsIn: true,
        handler(request, reply, kit) {
          const body = kit.guardPost(request);
          const action = passkeyActionOf(request, body);
          if (action === 'register') return deps.port.register(request, reply);
          if (action !== 'authenticate') {
            throw new HttpError('bad_request', {}, 'The action must be authenticate or register.');
          }
          const { secure } = kit.site(request);
          const ceremony = {
            challengeCookie: parseCookies(request.headers.cookie).get(challengeCookieName(secure)),
            secure,
          };
          return kit.signIn(request, reply, body, {
            authorize: (credentials, context) => authorize(credentials, context, ceremony),
            // The ceremony's challenge is spent whatever the outcome, as Auth.js clears it.
            cookies: [clearChallenge(secure)],
            detail: { method: 'passkey' },
          });
        },
      },
    ],
  };
}

/** Passkeys as the account wing registers them: the way in, and their count in the summary. */
export function passkeysWayIn(ports: {
  db: Kysely<Database>;
  passkeys: Pick<Passkeys, 'port'>;
  challenges: SignInChallenges | undefined;
  log: { info(fields: object, message: string): void };
}): AccountWayIn {
  const store = createPasskeyStore(ports.db);
  return {
    wayIn: createPasskeyWayIn({ ...ports, port: ports.passkeys.port }),
    factor: {
      name: 'passkeys',
      summary: async (userId) => ({ passkeys: await store.count(userId) }),
    },
  };
}
