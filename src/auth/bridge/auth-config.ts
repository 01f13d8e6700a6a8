import type { AuthConfig } from '@auth/core';
import { AuthError, CredentialsSignin } from '@auth/core/errors';
import {
  decode as authjsDecode,
  encode as authjsEncode,
  type JWT,
  type JWTDecodeParams,
  type JWTOptions,
} from '@auth/core/jwt';
import Credentials from '@auth/core/providers/credentials';
import type { Provider } from '@auth/core/providers';
import type { User } from '@auth/core/types';
import type { FastifyBaseLogger } from 'fastify';
import { GateFullError } from '../../traffic/work-gate.js';
import { settleCallbackUrl } from '../cookies/callback-url.js';
import { authCookieNames, type SessionCookiePrefix } from '../cookies/cookie-names.js';
import type { AuthRequestContext, ProofCharge, SignedInUser } from '../request/request-context.js';
import type { SessionClaims } from '../session/session-claims.js';
import type { User as StoredUser } from '../../users/store.js';

export const authBasePath = '/api/auth';

export interface AuthConfigDeps {
  secrets: readonly string[];
  session: { maxAgeSeconds: number; updateAgeSeconds: number };
  sessionCookiePrefix: SessionCookiePrefix;
  authorize: ((
    credentials: Partial<Record<string, unknown>>,
    context: AuthRequestContext,
  ) => Promise<User | null>) & {
    /** A way in's own proof of the account: the checks that follow a right password. */
    afterProof(
      user: StoredUser,
      firstProof: string,
      context: AuthRequestContext,
      charge?: ProofCharge,
    ): Promise<SignedInUser | null>;
    /** The device cookie of a sign-in Auth.js let through, for the account at `email`. */
    issueDevice(email: string, context: AuthRequestContext): void;
  };
  /** Auth.js providers the ways in add (identity providers); none when absent. */
  providers?: readonly Provider[];
  /** Auth.js error types the ways in's refusals raise: expected outcomes, not errors. */
  refusalErrors: ReadonlySet<string>;
  claims: SessionClaims;
  log: FastifyBaseLogger;
  /** Gatehouse's synchronous codec, or undefined for Auth.js's own (fast paths off). */
  codec: Pick<JWTOptions, 'encode' | 'decode'> | undefined;
}

/** Auth.js logs every refusal as an error; these are expected outcomes, logged as such. */
type AuthLogger = Required<Pick<NonNullable<AuthConfig['logger']>, 'error' | 'warn' | 'debug'>>;

function authLogger(log: FastifyBaseLogger, refusalErrors: ReadonlySet<string>): AuthLogger {
  return {
    error(error: Error) {
      if (error instanceof CredentialsSignin) return;
      if (error instanceof AuthError && refusalErrors.has(error.type)) return;
      if (error instanceof AuthError && error.type === 'MissingCSRF') {
        log.warn({ authError: error.type }, 'CSRF check failed');
        return;
      }
      // Auth.js wraps callback failures; the cause carries the stack. Tokens are never in these.
      const cause = (error as { cause?: { err?: unknown } }).cause?.err ?? error.cause;
      const type = error instanceof AuthError ? error.type : error.name;
      if (cause instanceof GateFullError)
        log.warn({ authError: type }, 'sign-in shed: hash queue full');
      else if (type === 'JWTSessionError')
        log.info({ authError: type }, 'unreadable session token');
      else log.error({ authError: type, err: cause ?? error }, 'Auth.js error');
    },
    warn(code) {
      log.warn({ authWarning: code }, 'Auth.js warning');
    },
    debug() {
      // Auth.js debug output includes request bodies (passwords): never forwarded.
    },
  };
}

/**
 * Auth.js's own decode, with an unreadable token as `null` instead of a throw (as Gatehouse's
 * codec does). Every caller treats both as "no session"; but sign-out, on a throw, skips its
 * `signOut` event, and with it the revocation of the other sessions the request holds tokens
 * for (a stray chunk beside a valid cookie makes the assembled token unreadable).
 */
async function decodeOrNull(params: JWTDecodeParams): Promise<JWT | null> {
  try {
    return await authjsDecode(params);
  } catch {
    return null;
  }
}

/**
 * Auth.js's `signIn` callback: a credentials post was judged already (true); an identity
 * provider's sign-in is judged by the way in whose route it came through, and `user` becomes
 * the account it signs in (the jwt callback issues the session for it). A redirect is a
 * refusal the way in words; no judge (a provider reached some other way) is Auth.js's
 * AccessDenied.
 */
async function judgeProviderSignIn(
  deps: Pick<AuthConfigDeps, 'authorize'>,
  context: AuthRequestContext,
  user: User,
  account: { type: string; provider: string } | null | undefined,
  profile: Record<string, unknown> | undefined,
): Promise<boolean | string> {
  if (account?.type === 'credentials') return true;
  if (account?.type !== 'oauth' && account?.type !== 'oidc') return false;
  const judge = context.via?.provider;
  if (judge === undefined) return false;
  const verdict = await judge(
    { providerId: account.provider, profile: profile ?? {} },
    context,
    (found, firstProof, charge) => deps.authorize.afterProof(found, firstProof, context, charge),
  );
  if ('redirect' in verdict) return verdict.redirect;
  user.id = verdict.signedIn.id;
  user.email = verdict.signedIn.email;
  user.name = verdict.signedIn.name;
  return true;
}

/** Auth.js's configuration for one request: its callbacks see that request's context. */
export type AuthConfigFor = (context: AuthRequestContext) => AuthConfig;

const credentialFields = {
  email: { label: 'Email', type: 'email', required: true, autocomplete: 'username' },
  password: {
    label: 'Password',
    type: 'password',
    required: true,
    autocomplete: 'current-password',
  },
};

/**
 * One Auth.js configuration per scheme (the cookie names differ between http and https),
 * completed per request with callbacks bound to the request's context. Auth.js reads its
 * configuration afresh on every request anyway; binding costs a few small objects.
 */
export function createAuthConfig(deps: AuthConfigDeps, secure: boolean): AuthConfigFor {
  const base = {
    basePath: authBasePath,
    secret: [...deps.secrets],
    trustHost: true,
    useSecureCookies: secure,
    session: {
      strategy: 'jwt',
      maxAge: deps.session.maxAgeSeconds,
      updateAge: deps.session.updateAgeSeconds,
    },
    jwt: deps.codec ?? { encode: authjsEncode, decode: decodeOrNull },
    cookies: secure
      ? {
          sessionToken: {
            name: authCookieNames(true, deps.sessionCookiePrefix).session,
            options: { httpOnly: true, sameSite: 'lax', path: '/', secure: true },
          },
        }
      : {},
    logger: authLogger(deps.log, deps.refusalErrors),
  } satisfies Omit<AuthConfig, 'providers'>;
  const baseLogger = base.logger;
  return (context) => ({
    ...base,
    // The same logger, noting the error's type on the request (its sign-in outcome).
    logger: {
      ...baseLogger,
      error(error: Error) {
        context.authError ??= error instanceof AuthError ? error.type : error.name;
        baseLogger.error(error);
      },
    },
    providers: [
      Credentials({
        credentials: credentialFields,
        // A way in's own sign-in route brings its own check (src/auth/way-in.ts).
        authorize: (credentials) =>
          context.via?.authorize !== undefined
            ? context.via.authorize(credentials, context, (user, firstProof, charge) =>
                deps.authorize.afterProof(user, firstProof, context, charge),
              )
            : deps.authorize(credentials, context),
      }),
      ...(deps.providers ?? []),
    ],
    callbacks: {
      // Where Auth.js settles a callbackUrl (parameter, field or cookie): the service's strict
      // rule, so that a value that reached Auth.js unfiltered still cannot lead off-site.
      redirect: ({ url, baseUrl }) => settleCallbackUrl(url, baseUrl) ?? baseUrl,
      // Every sign-in passes here, whichever way in judged it: the one place its device is set.
      signIn: async ({ user, account, profile }) => {
        const verdict = await judgeProviderSignIn(deps, context, user, account, profile);
        if (verdict === true && typeof user.email === 'string')
          deps.authorize.issueDevice(user.email, context);
        return verdict;
      },
      jwt: (params) => deps.claims.jwt(params, context),
      session: (params) => deps.claims.session(params),
    },
    events: {
      signOut: (message) => deps.claims.signOut('token' in message ? message : {}, context),
    },
  });
}
