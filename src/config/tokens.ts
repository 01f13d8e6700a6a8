import * as z from 'zod/mini';
import { readSigningKeys, signingKeyAdvice } from '../util/signing-key-material.js';
import { integer, optionalText, trimmedText } from './read/kinds.js';
import { noted } from './read/notes.js';

/** Longest a session token (JWT) may live: a revoked session's tokens stay valid that long. */
export const tokenTtlMaxSeconds = 3600;

/**
 * Tokens for other backends (adoption spec §4): how long a session token lives, its audience,
 * the signing keys when given (else kept in the database), and the credentials that may
 * introspect. The key is read and checked here, at start-up; the introspection file is only
 * named: it is read when the service starts and again whenever it changes, as ADMIN_TOKEN_FILE.
 */
export const tokens = z.pipe(
  z
    .object({
      TOKEN_TTL: integer(30, tokenTtlMaxSeconds, 300),
      TOKEN_AUDIENCE: noted(trimmedText(), {
        default: 'AUTH_URL',
        example: 'https://api.example.com',
      }),
      TOKEN_SIGNING_KEY: noted(trimmedText(), {
        default: 'keys kept in the database',
        example: '(a PEM file: TOKEN_SIGNING_KEY_FILE=/run/secrets/token-key.pem)',
      }),
      INTROSPECTION_TOKEN_FILE: noted(optionalText(), {
        example: '/run/secrets/gatehouse-introspection-tokens',
      }),
    })
    .check(
      z.superRefine((e, ctx) => {
        if (e.TOKEN_SIGNING_KEY === undefined) return;
        const reading = readSigningKeys(e.TOKEN_SIGNING_KEY);
        if (typeof reading === 'string')
          ctx.addIssue({
            code: 'custom',
            path: ['TOKEN_SIGNING_KEY'],
            message: `${reading}; ${signingKeyAdvice}`,
          });
      }),
    ),
  z.transform((e) => ({
    tokens: {
      /** TOKEN_TTL: how long a session token lives, in seconds. */
      ttlSeconds: e.TOKEN_TTL,
      /** TOKEN_AUDIENCE; undefined: the issuer (AUTH_URL, or the request's origin). */
      audience: e.TOKEN_AUDIENCE,
      /** TOKEN_SIGNING_KEY(_FILE): PEM private keys, the first signing; undefined: the database's. */
      signingKeyPem: e.TOKEN_SIGNING_KEY,
      /** INTROSPECTION_TOKEN_FILE; undefined: `POST /api/auth/introspect` is not served. */
      introspectionTokenFile: e.INTROSPECTION_TOKEN_FILE,
    },
  })),
);
