import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { readTokenFile, watchTokenFile } from '../admin/tokens.js';
import { authBasePath } from '../auth/bridge/auth-config.js';
import { orUnavailable } from '../auth/request/request-context.js';
import { originOf } from '../auth/request/request-site.js';
import type { SessionAccess } from '../auth/session/session-access.js';
import type { Database } from '../db/schema.js';
import { HttpError } from '../http/errors.js';
import type { Site } from '../http/site.js';
import { useAccessToken } from '../users/access-tokens.js';
import { createIntrospection } from './introspect.js';
import type { KeyRing } from './key-ring.js';
import { amrOf, mintSessionToken, type TokenSubject } from './session-token.js';

/*
 * Tokens for the app's other backends, mobile apps and scripts (adoption spec §4): a short-lived
 * JWT for a session or a personal access token, the public keys that verify it, the metadata
 * that finds them, and introspection for backends that would rather ask.
 */

export interface TokenSettings {
  authUrl: string | undefined;
  tokens: {
    ttlSeconds: number;
    audience: string | undefined;
    introspectionTokenFile: string | undefined;
  };
  session: { absoluteMaxAgeSeconds: number };
}

export interface TokenRegistration {
  config: TokenSettings;
  db: Kysely<Database>;
  ring: KeyRing;
  /** The auth wing's session read (src/auth/register.ts). */
  sessions: Pick<SessionAccess, 'current'>;
  now: () => number;
}

export const tokenPaths = {
  token: `${authBasePath}/token`,
  jwks: `${authBasePath}/jwks.json`,
  introspect: `${authBasePath}/introspect`,
  metadata: `${authBasePath}/.well-known/openid-configuration`,
  rootJwks: '/.well-known/jwks.json',
  rootMetadata: '/.well-known/openid-configuration',
} as const;

/** How long those who fetch the key set may keep it: a new key is published longer before it signs. */
const keySetMaxAgeSeconds = 300;

/** 401 for a bearer credential that is not one, with the header RFC 6750 asks for. */
const badBearer = (detail: string) =>
  new HttpError('unauthenticated', { 'www-authenticate': 'Bearer error="invalid_token"' }, detail);

const bearerOf = (request: FastifyRequest): string | undefined => {
  const header = request.headers.authorization;
  if (header === undefined) return undefined;
  return /^Bearer +(\S+) *$/i.exec(header)?.[1] ?? '';
};

/** Who `GET /api/auth/token` is for: the bearer's access token, else the session cookie's. */
async function subjectOf(deps: TokenRegistration, request: FastifyRequest): Promise<TokenSubject> {
  const bearer = bearerOf(request);
  if (bearer !== undefined) {
    const held = await useAccessToken(deps.db, bearer, deps.now());
    if (held === null)
      throw badBearer('The access token is not valid: it may be mistyped, revoked or expired.');
    return {
      userId: held.userId,
      email: held.email,
      name: held.name,
      sid: held.id,
      authTimeMs: held.createdAt,
      amr: ['pat'],
      notAfterMs: held.expiresAt,
    };
  }
  // A page of another site cannot have a token made with the person's cookie.
  if (request.headers['sec-fetch-site']?.toLowerCase() === 'cross-site')
    throw new HttpError('cross_site', {}, 'A page of another site cannot ask for a token.');
  const current = await orUnavailable(() => deps.sessions.current(request));
  if (current === null) throw new HttpError('unauthenticated');
  const { claims } = current;
  const row = await deps.db
    .selectFrom('sessions')
    .select(['public_id', 'proofs'])
    .where('id', '=', claims.sid)
    .executeTakeFirst();
  if (row?.public_id == null) throw new HttpError('unauthenticated');
  return {
    userId: claims.sub,
    email: claims.email,
    name: claims.name,
    sid: row.public_id,
    authTimeMs: claims.auth_time * 1000,
    amr: amrOf(row.proofs.split(' ').filter((proof) => proof !== '')),
    notAfterMs: (claims.auth_time + deps.config.session.absoluteMaxAgeSeconds) * 1000,
  };
}

/** The introspection credentials (INTROSPECTION_TOKEN_FILE), or undefined when none are usable. */
function introspectionCredentials(site: Site, file: string | undefined) {
  if (file === undefined) return undefined;
  const log = site.app.log;
  const setting = 'INTROSPECTION_TOKEN_FILE';
  const first = readTokenFile(file);
  for (const problem of first.problems) log.warn({ setting }, `introspection tokens: ${problem}`);
  if (first.tokens.length === 0) {
    log.warn(
      { setting },
      `introspection off: ${setting} (${file}) has no usable token; each line is label:token, the token at least 32 characters (openssl rand -hex 32)`,
    );
    return undefined;
  }
  return watchTokenFile(file, log, first, site.now, { setting, what: 'introspection tokens' });
}

/** `/api/auth/token`, the key set and metadata, and introspection when credentials are given. */
export function registerTokens(site: Site, deps: TokenRegistration): void {
  const { config } = deps;
  const issuerOf = (request: FastifyRequest) => originOf(request, config.authUrl);
  const credentials = introspectionCredentials(site, config.tokens.introspectionTokenFile);
  const introspect = createIntrospection({
    db: deps.db,
    ring: deps.ring,
    absoluteMaxAgeSeconds: config.session.absoluteMaxAgeSeconds,
    now: deps.now,
  });
  const get = ['GET', 'HEAD'] as const;
  site.declareRoutes({
    [tokenPaths.token]: get,
    [tokenPaths.jwks]: get,
    [tokenPaths.metadata]: get,
    [tokenPaths.rootJwks]: get,
    [tokenPaths.rootMetadata]: get,
    ...(credentials !== undefined && { [tokenPaths.introspect]: ['POST'] }),
  });

  const token = async (request: FastifyRequest, reply: FastifyReply) => {
    reply.header('cache-control', 'no-store');
    const subject = await subjectOf(deps, request);
    const issuer = issuerOf(request);
    return mintSessionToken(
      { ring: deps.ring, ttlSeconds: config.tokens.ttlSeconds, now: deps.now },
      subject,
      { issuer, audience: config.tokens.audience ?? issuer },
    );
  };
  const keySet = async (_request: FastifyRequest, reply: FastifyReply) => {
    reply.header('cache-control', `public, max-age=${keySetMaxAgeSeconds}`);
    return { keys: await deps.ring.published() };
  };
  const metadata = async (request: FastifyRequest, reply: FastifyReply) => {
    const issuer = issuerOf(request);
    const algs = [...new Set((await deps.ring.published()).map((key) => key.alg))];
    reply.header('cache-control', `public, max-age=${keySetMaxAgeSeconds}`);
    return {
      issuer,
      jwks_uri: `${issuer}${tokenPaths.jwks}`,
      ...(credentials !== undefined && {
        introspection_endpoint: `${issuer}${tokenPaths.introspect}`,
        introspection_endpoint_auth_methods_supported: ['bearer'],
      }),
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: algs,
      token_endpoint_auth_signing_alg_values_supported: algs,
    };
  };
  void site.app.register((scope, _options, done) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: 16 * 1024 },
      (_request, body, parsed) => parsed(null, body),
    );
    scope.get(tokenPaths.token, token);
    for (const path of [tokenPaths.jwks, tokenPaths.rootJwks]) scope.get(path, keySet);
    for (const path of [tokenPaths.metadata, tokenPaths.rootMetadata]) scope.get(path, metadata);
    if (credentials !== undefined)
      scope.post(tokenPaths.introspect, async (request, reply) => {
        reply.header('cache-control', 'no-store');
        // The same answer, in the same time, for a wrong and a missing credential.
        if (credentials.authenticate(request.headers.authorization) === null)
          throw new HttpError(
            'unauthenticated',
            { 'www-authenticate': 'Bearer realm="introspection"' },
            'Introspection needs a credential of INTROSPECTION_TOKEN_FILE as a bearer token.',
          );
        const body = typeof request.body === 'string' ? request.body : '';
        const tokenSent = new URLSearchParams(body).get('token');
        if (tokenSent === null || tokenSent === '')
          throw new HttpError(
            'bad_request',
            {},
            'Send the token to look at as the form field `token` (application/x-www-form-urlencoded).',
          );
        return orUnavailable(() => introspect(tokenSent, issuerOf(request)));
      });
    done();
  });
}
