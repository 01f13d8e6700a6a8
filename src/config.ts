import os from 'node:os';
import { z } from 'zod';

const minSecretBytes = 32;

const integer = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

const onOff = z
  .enum(['on', 'off', 'true', 'false', '1', '0'])
  .transform((value) => value === 'on' || value === 'true' || value === '1');

const envSchema = (requireSecret: boolean) =>
  z
    .object({
      NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
      HOST: z.string().min(1).optional(),
      PORT: integer(0, 65535).default(3000),
      DATA_DIR: z.string().min(1).default('./data'),
      DATABASE_URL: z
        .string()
        .regex(/^(file:|postgres:\/\/|postgresql:\/\/)/, 'must start with file: or postgres://')
        .optional(),
      AUTH_SECRET: z
        .string()
        .optional()
        .transform((raw) =>
          (raw ?? '')
            .split(',')
            .map((secret) => secret.trim())
            .filter((secret) => secret.length > 0),
        )
        .refine(
          (secrets) => secrets.every((secret) => Buffer.byteLength(secret) >= minSecretBytes),
          `each comma-separated secret must be at least ${minSecretBytes} bytes`,
        ),
      AUTH_URL: z
        .url({ protocol: /^https?$/ })
        .optional()
        .transform((url) => (url === undefined ? undefined : new URL(url).origin)),
      TRUST_PROXY: z
        .string()
        .optional()
        .transform((raw) =>
          (raw ?? '')
            .split(',')
            .map((entry) => entry.trim())
            .filter((entry) => entry.length > 0),
        ),
      LOG_LEVEL: z
        .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
        .default('info'),
      SESSION_MAX_AGE: integer(60, 10 * 365 * 86400).default(30 * 86400),
      SESSION_UPDATE_AGE: integer(0, 10 * 365 * 86400).default(86400),
      SESSION_ABSOLUTE_MAX_AGE: integer(60, 10 * 365 * 86400).default(90 * 86400),
      PASSWORD_MIN_LENGTH: integer(8, 1024).default(12),
      THROTTLE_EMAIL_MAX_FAILURES: integer(1, 1_000_000).default(10),
      THROTTLE_IP_MAX_FAILURES: integer(1, 1_000_000).default(100),
      THROTTLE_WINDOW_SECONDS: integer(1, 86400).default(900),
      THROTTLE_LOCK_SECONDS: integer(1, 86400).default(900),
      HASH_CONCURRENCY: integer(1, 256).default(Math.max(1, os.availableParallelism())),
      HASH_QUEUE_MAX: integer(0, 100_000).default(64),
      BODY_LIMIT_BYTES: integer(1024, 1024 * 1024).default(16 * 1024),
      REQUEST_TIMEOUT_MS: integer(1000, 600_000).default(10_000),
      FAST_PATHS: onOff.default(true),
      WORKERS: z
        .union([z.literal('auto'), integer(1, 256)])
        .default(1)
        .transform((value) => (value === 'auto' ? os.availableParallelism() : value)),
    })
    .superRefine((env, ctx) => {
      if (env.NODE_ENV === 'production' && env.AUTH_SECRET.length === 0 && requireSecret) {
        ctx.addIssue({
          code: 'custom',
          path: ['AUTH_SECRET'],
          message: `is required in production (at least ${minSecretBytes} bytes; generate one with: openssl rand -base64 33)`,
        });
      }
      if (env.SESSION_ABSOLUTE_MAX_AGE < env.SESSION_MAX_AGE) {
        ctx.addIssue({
          code: 'custom',
          path: ['SESSION_ABSOLUTE_MAX_AGE'],
          message: 'must be at least SESSION_MAX_AGE',
        });
      }
    });

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
  readonly logLevel: string;
  readonly session: {
    readonly maxAgeSeconds: number;
    readonly updateAgeSeconds: number;
    readonly absoluteMaxAgeSeconds: number;
  };
  readonly passwordMinLength: number;
  readonly throttle: {
    readonly emailMaxFailures: number;
    readonly ipMaxFailures: number;
    readonly windowSeconds: number;
    readonly lockSeconds: number;
  };
  readonly hashConcurrency: number;
  readonly hashQueueMax: number;
  readonly bodyLimitBytes: number;
  readonly requestTimeoutMs: number;
  readonly fastPaths: boolean;
  readonly workers: number;
}

export type ConfigResult = { ok: true; config: Config } | { ok: false; problems: string[] };

/**
 * Parses the environment once; every problem names its variable. The users CLI passes
 * `requireSecret: false`: it never signs a token.
 */
export function parseConfig(
  env: NodeJS.ProcessEnv,
  options: { requireSecret?: boolean } = {},
): ConfigResult {
  const parsed = envSchema(options.requireSecret !== false).safeParse(env);
  if (!parsed.success) {
    return {
      ok: false,
      problems: parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`),
    };
  }
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
    logLevel: e.LOG_LEVEL,
    session: {
      maxAgeSeconds: e.SESSION_MAX_AGE,
      updateAgeSeconds: e.SESSION_UPDATE_AGE,
      absoluteMaxAgeSeconds: e.SESSION_ABSOLUTE_MAX_AGE,
    },
    passwordMinLength: e.PASSWORD_MIN_LENGTH,
    throttle: {
      emailMaxFailures: e.THROTTLE_EMAIL_MAX_FAILURES,
      ipMaxFailures: e.THROTTLE_IP_MAX_FAILURES,
      windowSeconds: e.THROTTLE_WINDOW_SECONDS,
      lockSeconds: e.THROTTLE_LOCK_SECONDS,
    },
    hashConcurrency: e.HASH_CONCURRENCY,
    hashQueueMax: e.HASH_QUEUE_MAX,
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
    fastPaths: e.FAST_PATHS,
    workers: e.WORKERS,
  };
  return { ok: true, config: Object.freeze(config) };
}
