import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import type { DatabaseBackend } from '../helpers/backends.js';
import { postWithCsrf } from '../helpers/account-requests.js';
import { Client } from '../helpers/client.js';
import {
  addUser,
  startServer,
  type TestServer,
  type TestServerOptions,
} from '../helpers/server.js';

export const password = 'correct horse battery staple';
/** The credential a backend introspects with (INTROSPECTION_TOKEN_FILE's `backend:` line). */
export const introspectionCredential = 'introspect-0123456789abcdef0123456789abcdef';

/** A file of `label:token` lines, in a temp folder of its own. */
export function introspectionFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-introspect-'));
  const file = path.join(dir, 'tokens');
  fs.writeFileSync(file, `backend:${introspectionCredential}\n`);
  return file;
}

export interface TokenSettingsForTest {
  ttlSeconds?: number;
  audience?: string;
  signingKeyPem?: string;
}

/** A server with introspection on, on `databaseUrl` (a fresh SQLite file when undefined). */
export function startTokenServer(
  databaseUrl: string | undefined,
  tokens: TokenSettingsForTest = {},
  options: TestServerOptions = {},
): Promise<TestServer> {
  return startServer({
    ...options,
    ...(databaseUrl !== undefined && { databaseUrl }),
    config: {
      ...options.config,
      tokens: {
        ttlSeconds: tokens.ttlSeconds ?? 300,
        audience: tokens.audience,
        signingKeyPem: tokens.signingKeyPem,
        introspectionTokenFile: introspectionFile(),
      },
    },
  });
}

/** A signed-in client of a new user: the client and the user's id. */
export async function signedIn(server: TestServer, email: string) {
  const userId = await addUser(server, email, password);
  const client = new Client(server.url);
  const response = await client.signIn(email, password);
  expect(response.status).toBe(200);
  return { client, userId };
}

/** `GET /api/auth/token`'s answer: the status and the body. */
export async function tokenOf(client: Client, headers: Record<string, string> = {}) {
  const response = await client.get('/api/auth/token', headers);
  return { response, body: (await response.json()) as { token: string; expires: string } };
}

/** `POST /api/auth/introspect` with the backend's credential (or `credential`). */
export async function introspect(
  server: TestServer,
  token: string,
  credential: string | null = introspectionCredential,
): Promise<Response> {
  return fetch(`${server.url}/api/auth/introspect`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(credential !== null && { authorization: `Bearer ${credential}` }),
    },
    body: new URLSearchParams({ token }).toString(),
  });
}

export async function activeOf(server: TestServer, token: string): Promise<boolean> {
  const response = await introspect(server, token);
  expect(response.status).toBe(200);
  return ((await response.json()) as { active: boolean }).active;
}

/** A personal access token made from the account API by a signed-in client. */
export async function newAccessToken(client: Client, name = 'deploy script', extra = {}) {
  const response = await postWithCsrf(client, '/api/account/tokens', { name, ...extra });
  expect(response.status).toBe(201);
  return (await response.json()) as { id: string; token: string; expiresAt: string | null };
}

/**
 * A token server on the backend's fresh database for the describe block it is called in,
 * started before its tests and closed after; the function answers it. Nothing for a skipped
 * backend.
 */
export function tokenServerFor(backend: DatabaseBackend): () => TestServer {
  let server: TestServer | undefined;
  let dispose: () => Promise<void> = async () => undefined;
  beforeAll(async () => {
    if (backend.skip) return;
    const database = await backend.create();
    dispose = database.dispose;
    server = await startTokenServer(database.url);
  });
  afterAll(async () => {
    await server?.close();
    await dispose();
  });
  return () => {
    if (server === undefined) throw new Error('no server: the backend is skipped');
    return server;
  };
}
