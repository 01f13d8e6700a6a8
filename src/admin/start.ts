import type { AddressInfo } from 'node:net';
import { buildAdminApp, type AdminAppDeps } from './admin-app.js';
import { readTokenFile, watchTokenFile } from './tokens.js';

export interface AdminListener {
  port: number;
  close(): Promise<void>;
}

export interface AdminStartLog {
  warn(fields: object, message: string): void;
  info(fields: object, message: string): void;
}

/**
 * The admin API on `host`:`port` when the token file holds a usable token; otherwise no
 * listener at all, and a warning that says why (an API nobody can call is no API, and one
 * anybody could call must never start). The token file is watched for changes from then on.
 */
export async function listenAdmin(
  address: { host: string; port: number; tokenFile: string | undefined },
  deps: Omit<AdminAppDeps, 'tokens'>,
  log: AdminStartLog,
): Promise<AdminListener | undefined> {
  if (address.tokenFile === undefined) {
    log.warn(
      { setting: 'ADMIN_TOKEN_FILE' },
      'admin API off: ADMIN_PORT is set but ADMIN_TOKEN_FILE is not; put label:token lines in a file and name it, e.g. ADMIN_TOKEN_FILE=/run/secrets/gatehouse-admin-tokens',
    );
    return undefined;
  }
  const first = readTokenFile(address.tokenFile);
  for (const problem of first.problems)
    log.warn({ setting: 'ADMIN_TOKEN_FILE' }, `admin tokens: ${problem}`);
  if (first.tokens.length === 0) {
    log.warn(
      { setting: 'ADMIN_TOKEN_FILE' },
      `admin API off: ADMIN_TOKEN_FILE (${address.tokenFile}) has no usable token; each line is label:token, the token at least 32 characters (openssl rand -hex 32)`,
    );
    return undefined;
  }
  const tokens = watchTokenFile(address.tokenFile, log, first);
  const app = buildAdminApp({ ...deps, tokens });
  await app.listen({ host: address.host, port: address.port });
  const port = (app.server.address() as AddressInfo).port;
  log.info(
    { host: address.host, port, tokens: tokens.count() },
    `admin API at http://${address.host.includes(':') ? `[${address.host}]` : address.host}:${port}/api/admin`,
  );
  return { port, close: () => app.close() };
}
