// The in-process server of a describe block run once per store (SQLite, and PostgreSQL when
// TEST_POSTGRES_URL is set): a fresh database, the server on it before the block's tests,
// both gone after them.
import { afterAll, beforeAll } from 'vitest';
import { createTestDatabase, type TestDatabase } from './postgres.js';
import { startServer, type TestServer, type TestServerOptions } from './server.js';

export function serverOnBackend(
  backend: { postgres: boolean; skip: boolean },
  options: TestServerOptions,
): { readonly server: TestServer } {
  let database: TestDatabase | undefined;
  let server: TestServer | undefined;
  beforeAll(async () => {
    if (backend.skip) return;
    if (backend.postgres) database = await createTestDatabase();
    server = await startServer({ ...options, databaseUrl: database?.url });
  });
  afterAll(async () => {
    await server?.close();
    await database?.drop();
  });
  return {
    get server() {
      if (server === undefined) throw new Error('the server is not started (skipped?)');
      return server;
    },
  };
}
