import * as z from 'zod/mini';
import { integer, list } from './kinds.js';
import { noted } from './notes.js';
import { nodeEnv } from './runtime.js';

/** The same value, typed as optional: apps built without these (tests) use the defaults. */
const omissible = <T extends object>(value: T): Partial<T> => value;

/** Read by metrics too: its listener must be another port. */
export const port = integer(0, 65535, 3000);

/** Read by metrics too: every listener gives a request the same time. */
export const requestTimeout = integer(1000, 600_000, 10_000);

/** The public listener: where it listens, whom it believes, and what it lets a client hold. */
export const http = z.pipe(
  z.object({
    NODE_ENV: nodeEnv,
    HOST: noted(z.optional(z.string().check(z.minLength(1))), {
      default: '`127.0.0.1` (`0.0.0.0` in production)',
      example: '0.0.0.0',
    }),
    PORT: port,
    TRUST_PROXY: noted(list(), { example: '10.0.0.0/8' }),
    BODY_LIMIT_BYTES: integer(1024, 1024 * 1024, 16 * 1024),
    REQUEST_TIMEOUT_MS: requestTimeout,
    KEEP_ALIVE_TIMEOUT_MS: integer(1000, 3_600_000, 72_000),
    // 0: not set; the limits then come from the memory and descriptor limits at start-up.
    MAX_CONNECTIONS: noted(integer(0, 1_000_000, 0), {
      default: '1024 per 256 MiB of memory',
      example: '10000',
    }),
    MAX_CONNECTIONS_PER_ADDRESS: noted(integer(0, 1_000_000, 0), {
      default: 'an eighth of `MAX_CONNECTIONS`',
      example: '1250',
    }),
    // Tokens per second per client group; a request costs 1 answered in front, 4 by Fastify.
    // Unset: 200, except in production without TRUST_PROXY (below).
    REQUEST_BUDGET_PER_SECOND: noted(
      z.optional(z.coerce.number().check(z.int(), z.minimum(0), z.maximum(1_000_000))),
      {
        default: '`200` (`0`, off, in production without `TRUST_PROXY`)',
        example: '200',
      },
    ),
    REQUEST_BUDGET_BURST: integer(1, 10_000_000, 400),
    LOG_SUCCESS_SAMPLE: z._default(z.coerce.number().check(z.minimum(0), z.maximum(1)), 1),
  }),
  z.transform((e) => ({
    host: e.HOST ?? (e.NODE_ENV === 'production' ? '0.0.0.0' : '127.0.0.1'),
    port: e.PORT,
    /** Proxies whose `X-Forwarded-For`/`-Proto` are believed: addresses or CIDRs. */
    trustProxy: e.TRUST_PROXY,
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
    ...omissible({
      /** Idle keep-alive connections close after this; keep it above a load balancer's idle timeout. */
      keepAliveTimeoutMs: e.KEEP_ALIVE_TIMEOUT_MS,
      /** Only the limits set explicitly; the rest come from the memory and descriptor limits. */
      connectionLimits: {
        ...(e.MAX_CONNECTIONS > 0 && { max: e.MAX_CONNECTIONS }),
        ...(e.MAX_CONNECTIONS_PER_ADDRESS > 0 && { perAddress: e.MAX_CONNECTIONS_PER_ADDRESS }),
      },
      /** Per client group (src/traffic/request-budget.ts); none when 0 or omitted. */
      requestBudget: {
        // Gatehouse serves no TLS: in production its clients arrive through a terminator, and
        // without TRUST_PROXY every client is that terminator's address. A budget per address
        // would then be one budget for the whole site, so it is off unless asked for.
        perSecond:
          e.REQUEST_BUDGET_PER_SECOND ??
          (e.NODE_ENV === 'production' && e.TRUST_PROXY.length === 0 ? 0 : 200),
        burst: e.REQUEST_BUDGET_BURST,
      },
      /** The fraction of successful GET access lines written; omitted: all. */
      logSuccessSample: e.LOG_SUCCESS_SAMPLE,
    }),
  })),
);
