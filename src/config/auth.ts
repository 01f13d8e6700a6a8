import * as z from 'zod/mini';
import { list, oneOf, trueFalse } from './read/kinds.js';
import { noted } from './read/notes.js';
import { nodeEnv } from './runtime.js';

const minSecretBytes = 32;
const secretAdvice = 'generate one with: openssl rand -base64 33';

/**
 * An obviously weak secret: few distinct characters, or one short pattern repeated. Random
 * base64 or hex (what the messages suggest) has 16 or more distinct characters.
 */
export function isWeakSecret(secret: string): boolean {
  if (new Set(secret).size < 8) return true;
  for (let period = 1; period <= secret.length / 2; period += 1) {
    if (
      secret
        .slice(0, period)
        .repeat(Math.ceil(secret.length / period))
        .startsWith(secret)
    ) {
      return true;
    }
  }
  return false;
}

/** `localhost`, `*.localhost`, 127.0.0.0/8 or [::1]: reachable only from the machine itself. */
export function isLoopbackOrigin(origin: string): boolean {
  const host = new URL(origin).hostname;
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    host === '[::1]' ||
    /^127(\.\d{1,3}){3}$/.test(host)
  );
}

/**
 * What seals the session and where the service says it lives. The users CLI passes
 * `requireSecret: false`: it never signs a token, so production does not ask it for one.
 */
export const auth = (requireSecret: boolean) =>
  z.pipe(
    z
      .object({
        NODE_ENV: nodeEnv,
        // Or AUTH_SECRET_FILE (src/config/read/secret-files.ts). No example: its own messages say how to
        // make one.
        AUTH_SECRET: noted(
          list().check(
            z.refine(
              (secrets) => secrets.every((secret) => Buffer.byteLength(secret) >= minSecretBytes),
              `each comma-separated secret must be at least ${minSecretBytes} bytes`,
            ),
          ),
          { default: 'generated in development' },
        ),
        AUTH_URL: noted(
          z.pipe(
            z.optional(
              z.url({
                protocol: /^https?$/,
                error:
                  'must be the public origin as a full URL starting with https:// (or http://)',
              }),
            ),
            z.transform((url) => (url === undefined ? undefined : new URL(url).origin)),
          ),
          { default: 'from the request (development)', example: 'https://auth.example.com' },
        ),
        AUTH_TRUST_HOST: trueFalse('false'),
        // Production refuses a plain-http AUTH_URL unless this says it is meant (below).
        AUTH_URL_ALLOW_HTTP: trueFalse('false'),
        SESSION_COOKIE_PREFIX: oneOf(['__Secure-', '__Host-'], '__Secure-'),
      })
      .check(
        z.superRefine((e, ctx) => {
          if (e.NODE_ENV !== 'production' || !requireSecret) return;
          if (e.AUTH_SECRET.length === 0) {
            ctx.addIssue({
              code: 'custom',
              path: ['AUTH_SECRET'],
              message: `is required in production (at least ${minSecretBytes} bytes; ${secretAdvice})`,
            });
          }
          if (e.AUTH_SECRET.some(isWeakSecret)) {
            ctx.addIssue({
              code: 'custom',
              path: ['AUTH_SECRET'],
              message: `is too weak for production (few distinct characters or a repeated pattern); ${secretAdvice}`,
            });
          }
          // Over plain http the session cookie cannot be Secure and passwords cross the network
          // in clear text. A loopback origin never leaves the machine (a production build tried
          // locally, a test fleet behind a local proxy), so it needs no opt-in.
          if (
            e.AUTH_URL !== undefined &&
            new URL(e.AUTH_URL).protocol === 'http:' &&
            !isLoopbackOrigin(e.AUTH_URL) &&
            !e.AUTH_URL_ALLOW_HTTP
          ) {
            ctx.addIssue({
              code: 'custom',
              path: ['AUTH_URL'],
              message: `is plain http in production (${e.AUTH_URL}): session cookies would be sent without Secure and passwords in clear text; use https:// (TLS at your proxy), e.g. AUTH_URL=https://auth.example.com, or set AUTH_URL_ALLOW_HTTP=true if plain http is intended`,
            });
          }
          // Redirects and cookie scope must not follow whatever Host header a client sends.
          if (e.AUTH_URL === undefined && !e.AUTH_TRUST_HOST) {
            ctx.addIssue({
              code: 'custom',
              path: ['AUTH_URL'],
              message:
                "is required in production: the public origin, e.g. https://auth.example.com (or set AUTH_TRUST_HOST=true to take it from each request's Host header, only behind a proxy that sets Host)",
            });
          }
        }),
      ),
    z.transform((e) => ({
      /** Current secret first; the others still decrypt during a rotation. Empty: generate one (dev). */
      authSecrets: e.AUTH_SECRET,
      /** The public origin; undefined: taken from each request. */
      authUrl: e.AUTH_URL,
      /** AUTH_TRUST_HOST=true: without AUTH_URL, the Host header is the public origin's. */
      authTrustHost: e.AUTH_TRUST_HOST,
      /** The session cookie's prefix over https: Auth.js's `__Secure-`, or the stricter `__Host-`. */
      sessionCookiePrefix: e.SESSION_COOKIE_PREFIX,
    })),
  );
