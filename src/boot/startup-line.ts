import os from 'node:os';
import type { Config } from '../config/index.js';
import { describeStore } from '../db/open.js';

export interface StartupSummary {
  /** For log search: `store`, `origin`, `mode`, and `workers` when more than one. */
  fields: {
    store: string;
    origin: string;
    mode: string;
    workers?: number;
    /** The identity providers people may sign in with, by id; absent when none. */
    providers?: string[];
    /** Where webhooks go: each endpoint's origin only (a path or query may hold a secret). */
    webhooks?: string[];
  };
  /** The same in one sentence, for a person reading the log. */
  message: string;
}

/**
 * What this start actually serves: the store (never a user name, password or query string),
 * the public origin and the mode. Written once the service listens, so a typo that fell back
 * to a default (a fresh SQLite file instead of PostgreSQL) shows in the first lines.
 */
export function startupSummary(config: Config): StartupSummary {
  const store = describeStore(config.databaseUrl);
  const origin = config.authUrl ?? "from each request's Host";
  const workers = config.workers > 1 ? config.workers : undefined;
  const providers = config.identityProviders.map((provider) => provider.id);
  const webhooks = (config.webhooks?.endpoints ?? []).map(originOnly);
  return {
    fields: {
      store,
      origin,
      mode: config.env,
      ...(workers !== undefined && { workers }),
      ...(providers.length > 0 && { providers }),
      ...(webhooks.length > 0 && { webhooks }),
    },
    message: `started in ${config.env} mode: store ${store}, public origin ${origin}${
      workers === undefined ? '' : `, ${workers} workers`
    }${providers.length === 0 ? '' : `, sign-in with ${providers.join(', ')}`}${
      webhooks.length === 0 ? '' : `, webhooks to ${webhooks.join(', ')}`
    }`,
  };
}

/** An endpoint as the log may show it: scheme, host and port, never a path, query or user. */
function originOnly(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    // The config checked every endpoint; nothing to show for one that is not a URL.
    return '(an endpoint)';
  }
}

/**
 * A line in pino's shape for the cluster primary, which has no pino logger: the same fields a
 * worker's logger writes (level 30 is info), so one log query finds both.
 */
export function writeInfoLine(fields: object, message: string): void {
  const line = {
    level: 30,
    time: Date.now(),
    pid: process.pid,
    hostname: os.hostname(),
    ...fields,
    msg: message,
  };
  process.stdout.write(`${JSON.stringify(line)}\n`);
}
