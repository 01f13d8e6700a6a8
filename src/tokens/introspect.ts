import { createPublicKey, type KeyObject } from 'node:crypto';
import { errors, jwtVerify, type JWTPayload } from 'jose';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { accessTokenPrefix, useAccessToken } from '../users/access-tokens.js';
import type { KeyRing } from './key-ring.js';

/** What `POST /api/auth/introspect` answers (RFC 7662): only `active` for a token that is not. */
export type Introspection = { active: false } | ({ active: true } & Record<string, unknown>);

const inactive: Introspection = { active: false };

export interface IntrospectDeps {
  db: Kysely<Database>;
  ring: KeyRing;
  /** SESSION_ABSOLUTE_MAX_AGE: a session signed in longer ago is over. */
  absoluteMaxAgeSeconds: number;
  now: () => number;
}

/** Whether the session a token names is live now: not ended, its user enabled, within its cap. */
async function sessionLive(deps: IntrospectDeps, userId: string, sid: string): Promise<boolean> {
  if (sid.startsWith('pat_')) {
    const row = await deps.db
      .selectFrom('access_tokens')
      .innerJoin('users', 'users.id', 'access_tokens.user_id')
      .select('access_tokens.expires_at')
      .where('access_tokens.id', '=', sid)
      .where('access_tokens.user_id', '=', userId)
      .where('access_tokens.revoked_at', 'is', null)
      .where('users.disabled', '=', 0)
      .executeTakeFirst();
    return row !== undefined && (row.expires_at === null || Number(row.expires_at) > deps.now());
  }
  const row = await deps.db
    .selectFrom('sessions')
    .innerJoin('users', 'users.id', 'sessions.user_id')
    .select('sessions.created_at')
    .where('sessions.public_id', '=', sid)
    .where('sessions.user_id', '=', userId)
    .where('sessions.revoked_at', 'is', null)
    .where('users.disabled', '=', 0)
    .executeTakeFirst();
  return (
    row !== undefined && Number(row.created_at) + deps.absoluteMaxAgeSeconds * 1000 > deps.now()
  );
}

/**
 * The public keys as KeyObjects, made once per `kid`. A `kid` the key set does not hold (another
 * instance's key, one withdrawn) finds none, and the token is not active.
 */
function keyLookup(ring: KeyRing) {
  const made = new Map<string, KeyObject>();
  return async (header: { kid?: string | undefined }): Promise<KeyObject> => {
    const kid = header.kid ?? '';
    // Asked each time (the ring keeps it in memory): a key withdrawn verifies nothing more.
    const jwk = await ring.find(kid);
    if (jwk === undefined) throw new errors.JWKSNoMatchingKey();
    const known = made.get(kid);
    if (known !== undefined) return known;
    const key = createPublicKey({ key: { ...jwk }, format: 'jwk' });
    made.set(kid, key);
    return key;
  };
}

/** A session token (JWT) of this issuer: active while its signature, times and session hold. */
async function introspectJwt(
  deps: IntrospectDeps,
  keyOf: ReturnType<typeof keyLookup>,
  token: string,
  issuer: string,
): Promise<Introspection> {
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, keyOf, {
      issuer,
      // Only what is signed here: never `none`, never HS256 with a public key as its secret.
      algorithms: ['ES256', 'EdDSA'],
      currentDate: new Date(deps.now()),
      requiredClaims: ['sub', 'exp', 'iat'],
    }));
  } catch {
    // Any token that does not verify (shape, signature, key, time) is simply not active.
    return inactive;
  }
  const { sub, sid } = payload;
  if (typeof sub !== 'string' || typeof sid !== 'string') return inactive;
  if (!(await sessionLive(deps, sub, sid))) return inactive;
  return {
    active: true,
    token_type: 'Bearer',
    iss: payload.iss,
    aud: payload.aud,
    sub,
    sid,
    username: payload.email,
    iat: payload.iat,
    exp: payload.exp,
    auth_time: payload.auth_time,
    amr: payload.amr,
  };
}

/** A personal access token: active while it is live (its use is noted). */
async function introspectAccessToken(
  deps: IntrospectDeps,
  token: string,
  issuer: string,
): Promise<Introspection> {
  const held = await useAccessToken(deps.db, token, deps.now());
  if (held === null) return inactive;
  return {
    active: true,
    token_type: 'Bearer',
    iss: issuer,
    sub: held.userId,
    sid: held.id,
    username: held.email,
    iat: Math.floor(held.createdAt / 1000),
    ...(held.expiresAt !== null && { exp: Math.floor(held.expiresAt / 1000) }),
    amr: ['pat'],
  };
}

/** RFC 7662's answer for `token`, whichever kind it is. Throws only when the store fails. */
export function createIntrospection(deps: IntrospectDeps) {
  const keyOf = keyLookup(deps.ring);
  return (token: string, issuer: string): Promise<Introspection> =>
    token.startsWith(accessTokenPrefix)
      ? introspectAccessToken(deps, token, issuer)
      : introspectJwt(deps, keyOf, token, issuer);
}
