import os from 'node:os';
import { en } from 'zod/locales';
import * as z from 'zod/mini';
import { readFileVariables } from './secret-files.js';
import {
  hexColourPattern,
  isLogoUrl,
  isProductName,
  pageDefaults,
  productNameMaxLength,
  type PageSettings,
} from './pages/page-settings.js';

// zod/mini: the same validation as zod's chained API, at a fraction of its load time and
// memory (measured: full zod was the largest module in the start-up bundle).
z.config(en());

const minSecretBytes = 32;
/**
 * The hashing threads' nice increment: a middle way, measured with `npm run bench:hash-priority`
 * (README). Higher keeps probes quicker during a burst of sign-ins and makes sign-ins slower
 * while reads saturate the core; at 19 a sign-in took 2-3 s under a read flood.
 */
export const defaultHashNice = 10;

const integer = (min: number, max: number, fallback: number) =>
  z._default(z.coerce.number().check(z.int(), z.minimum(min), z.maximum(max)), fallback);

const list = z.pipe(
  z.optional(z.string()),
  z.transform((raw) =>
    (raw ?? '')
      .split(',')
      .map((entry) => entry.trim())
      .filter((entry) => entry.length > 0),
  ),
);

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

const secretAdvice = 'generate one with: openssl rand -base64 33';

const onOff = z.pipe(
  z._default(z.enum(['on', 'off', 'true', 'false', '1', '0']), 'on'),
  z.transform((value) => value === 'on' || value === 'true' || value === '1'),
);

const envSchema = (requireSecret: boolean) =>
  z
    .object({
      NODE_ENV: z._default(z.enum(['development', 'production', 'test']), 'development'),
      HOST: z.optional(z.string().check(z.minLength(1))),
      PORT: integer(0, 65535, 3000),
      DATA_DIR: z._default(z.string().check(z.minLength(1)), './data'),
      DATABASE_URL: z.optional(
        z
          .string()
          .check(
            z.regex(
              /^(file:|postgres:\/\/|postgresql:\/\/)/,
              'must start with file: or postgres://',
            ),
          ),
      ),
      AUTH_SECRET: list.check(
        z.refine(
          (secrets) => secrets.every((secret) => Buffer.byteLength(secret) >= minSecretBytes),
          `each comma-separated secret must be at least ${minSecretBytes} bytes`,
        ),
      ),
      AUTH_URL: z.pipe(
        z.optional(z.url({ protocol: /^https?$/ })),
        z.transform((url) => (url === undefined ? undefined : new URL(url).origin)),
      ),
      TRUST_PROXY: list,
      AUTH_TRUST_HOST: z.pipe(
        z._default(z.enum(['true', 'false', '1', '0']), 'false'),
        z.transform((value) => value === 'true' || value === '1'),
      ),
      SESSION_COOKIE_PREFIX: z._default(z.enum(['__Secure-', '__Host-']), '__Secure-'),
      LOG_LEVEL: z._default(
        z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
        'info',
      ),
      SESSION_MAX_AGE: integer(60, 10 * 365 * 86400, 30 * 86400),
      SESSION_UPDATE_AGE: integer(0, 10 * 365 * 86400, 86400),
      SESSION_ABSOLUTE_MAX_AGE: integer(60, 10 * 365 * 86400, 90 * 86400),
      PASSWORD_MIN_LENGTH: integer(8, 1024, 12),
      THROTTLE_EMAIL_MAX_FAILURES: integer(1, 1_000_000, 10),
      THROTTLE_IP_MAX_FAILURES: integer(1, 1_000_000, 100),
      THROTTLE_EMAIL_MAX_ATTEMPTS: integer(1, 1_000_000, 50),
      THROTTLE_IP_MAX_ATTEMPTS: integer(1, 1_000_000, 300),
      THROTTLE_WINDOW_SECONDS: integer(1, 86400, 900),
      THROTTLE_LOCK_SECONDS: integer(1, 86400, 900),
      DATABASE_PREPARED: onOff,
      SESSIONS_PER_USER_MAX: integer(1, 100_000, 100),
      // At most 4 by default: each hashing thread holds 19 MiB while it hashes, and a container's
      // CPU count is often the host's. Raise it explicitly where the cores and memory are there.
      HASH_CONCURRENCY: integer(1, 256, Math.min(4, Math.max(1, os.availableParallelism()))),
      HASH_NICE: integer(0, 19, defaultHashNice),
      HASH_QUEUE_MAX: integer(0, 100_000, 64),
      BODY_LIMIT_BYTES: integer(1024, 1024 * 1024, 16 * 1024),
      KEEP_ALIVE_TIMEOUT_MS: integer(1000, 3_600_000, 72_000),
      MAX_CONNECTIONS: integer(0, 1_000_000, 0),
      MAX_CONNECTIONS_PER_ADDRESS: integer(0, 1_000_000, 0),
      REQUEST_TIMEOUT_MS: integer(1000, 600_000, 10_000),
      FAST_PATHS: onOff,
      // Empty means unset (platforms often cannot unset a variable): metrics off.
      METRICS_PORT: z.pipe(
        z.optional(
          z.string().check(
            z.regex(/^(|[1-9][0-9]{0,4})$/, 'must be a port number from 1 to 65535, or empty'),
            z.refine((value) => value === '' || Number(value) <= 65535, 'must be at most 65535'),
          ),
        ),
        z.transform((value) => (value === undefined || value === '' ? undefined : Number(value))),
      ),
      METRICS_HOST: z.pipe(
        z.optional(z.string()),
        z.transform((value) => (value === '' ? undefined : value)),
      ),
      WORKERS: z.pipe(
        z._default(
          z.union([
            z.literal('auto'),
            z.coerce.number().check(z.int(), z.minimum(1), z.maximum(256)),
          ]),
          1,
        ),
        z.transform((value) => (value === 'auto' ? os.availableParallelism() : value)),
      ),
      PAGE_PRODUCT_NAME: z._default(
        z
          .string()
          .check(
            z.refine(
              isProductName,
              `must be 1 to ${productNameMaxLength} characters, not blank, no control characters`,
            ),
          ),
        pageDefaults.productName,
      ),
      PAGE_ACCENT_COLOR: z._default(
        z.string().check(z.regex(hexColourPattern, 'must be a hex colour like #2563eb or #26e')),
        pageDefaults.accentColor,
      ),
      // Empty means no logo, like unset (platforms often cannot unset a variable).
      PAGE_LOGO_URL: z.optional(
        z
          .string()
          .check(
            z.refine(
              (value) => value === '' || isLogoUrl(value),
              'must be an https:// URL or an absolute path like /logo.svg',
            ),
          ),
      ),
    })
    .check(
      z.superRefine((env, ctx) => {
        if (env.NODE_ENV === 'production' && env.AUTH_SECRET.length === 0 && requireSecret) {
          ctx.addIssue({
            code: 'custom',
            path: ['AUTH_SECRET'],
            message: `is required in production (at least ${minSecretBytes} bytes; ${secretAdvice})`,
          });
        }
        if (env.NODE_ENV === 'production' && requireSecret) {
          if (env.AUTH_SECRET.some(isWeakSecret)) {
            ctx.addIssue({
              code: 'custom',
              path: ['AUTH_SECRET'],
              message: `is too weak for production (few distinct characters or a repeated pattern); ${secretAdvice}`,
            });
          }
          // Redirects and cookie scope must not follow whatever Host header a client sends.
          if (env.AUTH_URL === undefined && !env.AUTH_TRUST_HOST) {
            ctx.addIssue({
              code: 'custom',
              path: ['AUTH_URL'],
              message:
                "is required in production: the public origin, e.g. https://auth.example.com (or set AUTH_TRUST_HOST=true to take it from each request's Host header, only behind a proxy that sets Host)",
            });
          }
        }
        if (env.METRICS_PORT === undefined && env.METRICS_HOST !== undefined) {
          ctx.addIssue({
            code: 'custom',
            path: ['METRICS_HOST'],
            message: 'is set but METRICS_PORT is not: set METRICS_PORT to turn metrics on',
          });
        }
        if (env.METRICS_PORT !== undefined && env.METRICS_PORT === env.PORT) {
          ctx.addIssue({
            code: 'custom',
            path: ['METRICS_PORT'],
            message: 'must differ from PORT: metrics are served on a listener of their own',
          });
        }
        if (env.SESSION_ABSOLUTE_MAX_AGE < env.SESSION_MAX_AGE) {
          ctx.addIssue({
            code: 'custom',
            path: ['SESSION_ABSOLUTE_MAX_AGE'],
            message: 'must be at least SESSION_MAX_AGE',
          });
        }
      }),
    );

export interface Config {
  readonly env: 'development' | 'production' | 'test';
  readonly host: string;
  readonly port: number;
  readonly dataDir: string;
  readonly databaseUrl: string;
  /** Current secret first; the others still decrypt during a rotation. Empty: generate one (dev). */
  readonly authSecrets: readonly string[];
  readonly authUrl: string | undefined;
  readonly trustProxy: readonly string[];
  /** The session cookie's prefix over https: Auth.js's `__Secure-`, or the stricter `__Host-`. */
  readonly sessionCookiePrefix: '__Secure-' | '__Host-';
  readonly logLevel: string;
  readonly session: {
    readonly maxAgeSeconds: number;
    readonly updateAgeSeconds: number;
    readonly absoluteMaxAgeSeconds: number;
  };
  readonly passwordMinLength: number;
  readonly throttle: {
    readonly emailMaxFailures: number;
    readonly emailMaxAttempts: number;
    readonly ipMaxAttempts: number;
    readonly ipMaxFailures: number;
    readonly windowSeconds: number;
    readonly lockSeconds: number;
  };
  /** Named prepared statements on PostgreSQL; off behind PgBouncer in transaction mode. */
  readonly databasePrepared: boolean;
  /** Live sessions per user; signing in past it ends the oldest. */
  readonly sessionsPerUserMax: number;
  readonly hashConcurrency: number;
  readonly hashQueueMax: number;
  /** How much lower than the event loop the hashing threads run (Linux nice increment). */
  readonly hashNice: number;
  readonly bodyLimitBytes: number;
  readonly requestTimeoutMs: number;
  /** Idle keep-alive connections close after this; keep it above a load balancer's idle timeout. */
  readonly keepAliveTimeoutMs?: number;
  /** Only the limits set explicitly; the rest come from the descriptor limit at start-up. */
  readonly connectionLimits?: { max?: number; perAddress?: number };
  readonly fastPaths: boolean;
  /** Prometheus metrics on a listener of their own; off (undefined) unless METRICS_PORT is set. */
  readonly metrics: { readonly port: number; readonly host: string } | undefined;
  readonly workers: number;
  /** The sign-in and sign-out pages' product name, accent colour and logo. */
  readonly page: PageSettings;
}

export type ConfigResult = { ok: true; config: Config } | { ok: false; problems: string[] };

/**
 * Parses the environment once; every problem names its variable. `AUTH_SECRET_FILE` and
 * `DATABASE_URL_FILE` are read here. The users CLI passes `requireSecret: false`: it never
 * signs a token.
 */
export function parseConfig(
  env: NodeJS.ProcessEnv,
  options: { requireSecret?: boolean } = {},
): ConfigResult {
  const files = readFileVariables(env);
  const parsed = envSchema(options.requireSecret !== false).safeParse(files.env);
  const problems = [
    ...files.problems,
    ...(parsed.success
      ? []
      : parsed.error.issues
          .filter((issue) => !files.failed.has(String(issue.path[0])))
          .map((issue) => `${issue.path.join('.')}: ${issue.message}`)),
  ];
  if (!parsed.success || problems.length > 0) return { ok: false, problems };
  const e = parsed.data;
  const config: Config = {
    env: e.NODE_ENV,
    host: e.HOST ?? (e.NODE_ENV === 'production' ? '0.0.0.0' : '127.0.0.1'),
    port: e.PORT,
    dataDir: e.DATA_DIR,
    databaseUrl: e.DATABASE_URL ?? `file:${e.DATA_DIR}/gatehouse.db`,
    authSecrets: e.AUTH_SECRET,
    authUrl: e.AUTH_URL,
    trustProxy: e.TRUST_PROXY,
    sessionCookiePrefix: e.SESSION_COOKIE_PREFIX,
    logLevel: e.LOG_LEVEL,
    session: {
      maxAgeSeconds: e.SESSION_MAX_AGE,
      updateAgeSeconds: e.SESSION_UPDATE_AGE,
      absoluteMaxAgeSeconds: e.SESSION_ABSOLUTE_MAX_AGE,
    },
    passwordMinLength: e.PASSWORD_MIN_LENGTH,
    throttle: {
      emailMaxFailures: e.THROTTLE_EMAIL_MAX_FAILURES,
      emailMaxAttempts: e.THROTTLE_EMAIL_MAX_ATTEMPTS,
      ipMaxAttempts: e.THROTTLE_IP_MAX_ATTEMPTS,
      ipMaxFailures: e.THROTTLE_IP_MAX_FAILURES,
      windowSeconds: e.THROTTLE_WINDOW_SECONDS,
      lockSeconds: e.THROTTLE_LOCK_SECONDS,
    },
    databasePrepared: e.DATABASE_PREPARED,
    sessionsPerUserMax: e.SESSIONS_PER_USER_MAX,
    hashConcurrency: e.HASH_CONCURRENCY,
    hashQueueMax: e.HASH_QUEUE_MAX,
    hashNice: e.HASH_NICE,
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: e.KEEP_ALIVE_TIMEOUT_MS,
    connectionLimits: {
      ...(e.MAX_CONNECTIONS > 0 && { max: e.MAX_CONNECTIONS }),
      ...(e.MAX_CONNECTIONS_PER_ADDRESS > 0 && { perAddress: e.MAX_CONNECTIONS_PER_ADDRESS }),
    },
    fastPaths: e.FAST_PATHS,
    metrics:
      e.METRICS_PORT === undefined
        ? undefined
        : { port: e.METRICS_PORT, host: e.METRICS_HOST ?? '127.0.0.1' },
    workers: e.WORKERS,
    page: {
      productName: e.PAGE_PRODUCT_NAME,
      accentColor: e.PAGE_ACCENT_COLOR,
      logoUrl: e.PAGE_LOGO_URL === '' ? undefined : e.PAGE_LOGO_URL,
    },
  };
  return { ok: true, config: Object.freeze(config) };
}
