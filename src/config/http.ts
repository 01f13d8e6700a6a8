import net from 'node:net';
import * as z from 'zod/mini';
import { integer, list, wholeNumber } from './read/kinds.js';
import { noted } from './read/notes.js';
import { nodeEnv } from './runtime.js';

const fraction = 'must be a number from 0 to 1';

/**
 * What Fastify's `trustProxy` (proxy-addr) takes: an address, an address with a prefix length
 * or an IPv4 netmask, or one of its named ranges. Checked here so a typo stops the start
 * naming TRUST_PROXY instead of proxy-addr's bare "invalid IP address".
 */
function isProxyEntry(entry: string): boolean {
  if (['loopback', 'linklocal', 'uniquelocal'].includes(entry)) return true;
  const [address = '', range, ...rest] = entry.split('/');
  const family = net.isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (range === undefined) return true;
  if (family === 4 && net.isIPv4(range)) return true;
  return /^\d{1,3}$/.test(range) && Number(range) <= (family === 4 ? 32 : 128);
}

/** The same value, typed as optional: apps built without these (tests) use the defaults. */
const omissible = <T extends object>(value: T): Partial<T> => value;

/**
 * Read by metrics too: its listener must be another port. 0 (any free port) is accepted but
 * not offered: only a build step (the code-cache warm-up) and tests want it.
 */
export const port = z._default(
  wholeNumber(0, 65535, 'must be a whole number from 1 to 65535'),
  3000,
);

/** Read by metrics too: every listener gives a request the same time. */
export const requestTimeout = integer(1000, 600_000, 10_000);

/** The public listener: where it listens, whom it believes, and what it lets a client hold. */
export const http = z.pipe(
  z.object({
    NODE_ENV: nodeEnv,
    HOST: noted(z.optional(z.string().check(z.minLength(1, 'must not be empty'))), {
      default: '`127.0.0.1` (`0.0.0.0` in production)',
      example: '0.0.0.0',
    }),
    PORT: port,
    TRUST_PROXY: noted(
      list().check(
        z.refine(
          (entries) => entries.every(isProxyEntry),
          'each comma-separated entry must be an IP address or a CIDR range like 10.0.0.0/8 (or loopback, linklocal, uniquelocal)',
        ),
      ),
      { example: '10.0.0.0/8' },
    ),
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
    REQUEST_BUDGET_PER_SECOND: noted(z.optional(wholeNumber(0, 1_000_000)), {
      default: '`200` (`0`, off, in production without `TRUST_PROXY`)',
      example: '200',
    }),
    REQUEST_BUDGET_BURST: integer(1, 10_000_000, 400),
    LOG_SUCCESS_SAMPLE: z._default(
      z.coerce
        .number({ error: fraction })
        .check(z.minimum(0, { error: fraction }), z.maximum(1, { error: fraction })),
      1,
    ),
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
