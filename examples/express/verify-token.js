import { createRemoteJWKSet, jwtVerify } from 'jose';
import { gatehouseUrl } from './gatehouse.js';

// Gatehouse's public keys, fetched from Gatehouse directly (not through the browser's origin)
// and kept: jose fetches them again for a token signed by a key it does not know yet (after a
// rotation), at most once every 30 seconds.
const keySet = createRemoteJWKSet(new URL('/api/auth/jwks.json', gatehouseUrl));

// Who signs the tokens, and whom they are for: Gatehouse's AUTH_URL, and its TOKEN_AUDIENCE
// (by default the same).
const issuer = process.env.TOKEN_ISSUER ?? 'http://localhost:3001';
const audience = process.env.TOKEN_AUDIENCE ?? issuer;

// What a refused token's answer says, by jose's error code. Anything else (Gatehouse's key set
// out of reach) is this server's trouble, not the token's: 503.
const refusals = {
  ERR_JWT_EXPIRED: 'The token has expired: get a new one from /api/auth/token.',
  ERR_JWT_CLAIM_VALIDATION_FAILED: 'The token is not for this API: its issuer or audience differ.',
  ERR_JWS_SIGNATURE_VERIFICATION_FAILED: 'The token is not signed by Gatehouse.',
  ERR_JWKS_NO_MATCHING_KEY: 'The token is not signed by Gatehouse.',
  ERR_JOSE_ALG_NOT_ALLOWED: 'The token is not signed by Gatehouse.',
  ERR_JWS_INVALID: 'That is not a token.',
  ERR_JWT_INVALID: 'That is not a token.',
};

function refuse(res, message) {
  res
    .status(401)
    .set('WWW-Authenticate', 'Bearer error="invalid_token"')
    .json({ error: { code: 'invalid_token', message } });
}

/**
 * Express middleware for an API route called with a token from Gatehouse's /api/auth/token in
 * `Authorization: Bearer …`: checks its signature against Gatehouse's key set, its issuer,
 * audience and expiry, with no call to Gatehouse per request, and puts its claims in
 * `res.locals.token` (sub: the user's id, email, name, sid: the session's id, amr, exp).
 * A token stays valid until it expires (TOKEN_TTL, 5 minutes by default), even after its session
 * has ended.
 */
export async function requireToken(req, res, next) {
  const token = /^Bearer +(\S+) *$/i.exec(req.get('authorization') ?? '')?.[1];
  if (!token) return refuse(res, 'Send a token from /api/auth/token as Authorization: Bearer.');
  try {
    const { payload } = await jwtVerify(token, keySet, {
      issuer,
      audience,
      algorithms: ['ES256'],
      requiredClaims: ['exp', 'sub'],
    });
    res.locals.token = payload;
  } catch (error) {
    if (Object.hasOwn(refusals, error.code)) return refuse(res, refusals[error.code]);
    console.error('the token could not be checked:', error);
    return res.status(503).json({
      error: { code: 'unavailable', message: "Gatehouse's keys could not be read: try again." },
    });
  }
  next();
}
