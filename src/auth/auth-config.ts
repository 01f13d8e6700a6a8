import type { AuthConfig } from '@auth/core';
import { AuthError, CredentialsSignin } from '@auth/core/errors';
import { decode as authjsDecode, encode as authjsEncode, type JWTOptions } from '@auth/core/jwt';
import Credentials from '@auth/core/providers/credentials';
import type { FastifyBaseLogger } from 'fastify';
import { GateFullError } from '../users/work-gate.js';
import type { SessionClaims } from './session-claims.js';

export const authBasePath = '/api/auth';

/** Auth.js's cookie names, with the `__Host-` prefix for the session over https. */
export function sessionCookieName(secure: boolean): string {
  return secure ? '__Host-authjs.session-token' : 'authjs.session-token';
}

export interface AuthConfigDeps {
  secrets: readonly string[];
  session: { maxAgeSeconds: number; updateAgeSeconds: number };
  authorize: (credentials: Partial<Record<string, unknown>>) => Promise<unknown>;
  claims: SessionClaims;
  log: FastifyBaseLogger;
  /** Gatehouse's synchronous codec, or undefined for Auth.js's own (fast paths off). */
  codec: Pick<JWTOptions, 'encode' | 'decode'> | undefined;
}

/** Auth.js logs every refusal as an error; these are expected outcomes, logged as such. */
function authLogger(log: FastifyBaseLogger): AuthConfig['logger'] {
  return {
    error(error: Error) {
      if (error instanceof CredentialsSignin) return;
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

/** One Auth.js configuration per scheme: the cookie names differ between http and https. */
export function createAuthConfig(deps: AuthConfigDeps, secure: boolean): AuthConfig {
  const secret = [...deps.secrets];
  const cookieName = sessionCookieName(secure);
  return {
    basePath: authBasePath,
    secret,
    trustHost: true,
    useSecureCookies: secure,
    session: {
      strategy: 'jwt',
      maxAge: deps.session.maxAgeSeconds,
      updateAge: deps.session.updateAgeSeconds,
    },
    jwt: deps.codec ?? { encode: authjsEncode, decode: authjsDecode },
    cookies: secure
      ? {
          sessionToken: {
            name: cookieName,
            options: { httpOnly: true, sameSite: 'lax', path: '/', secure: true },
          },
        }
      : {},
    providers: [
      Credentials({
        credentials: {
          email: { label: 'Email', type: 'email', required: true, autocomplete: 'username' },
          password: {
            label: 'Password',
            type: 'password',
            required: true,
            autocomplete: 'current-password',
          },
        },
        authorize: deps.authorize as Parameters<typeof Credentials>[0]['authorize'],
      }),
    ],
    callbacks: {
      jwt: (params) => deps.claims.jwt(params),
      session: (params) => deps.claims.session(params),
    },
    events: {
      signOut: (message) => deps.claims.signOut('token' in message ? message : {}),
    },
    logger: authLogger(deps.log),
  };
}
