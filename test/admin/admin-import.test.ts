import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firstPass } from '../helpers/passes.js';
import {
  freePort,
  startServerProcess,
  untilAccepts,
  type ServerProcess,
} from '../helpers/processes.js';
import { distDir } from '../helpers/spawn.js';

const token = 'ops-token-0123456789abcdef0123456789abcdef';

/*
 * `POST /api/admin/users/import`: the CLI's import over the admin listener, JSON Lines streamed,
 * and the kept ids then reachable by the API's user routes.
 */
describe.runIf(firstPass)('the admin API import', () => {
  let dir: string;
  let server: ServerProcess;
  let adminUrl: string;
  const send = (body: string, query = '', type = 'application/x-ndjson') =>
    fetch(`${adminUrl}/api/admin/users/import${query}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': type },
      body,
    });
  const lines = (...users: unknown[]) => users.map((user) => JSON.stringify(user)).join('\n');

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-admin-import-'));
    const tokenFile = path.join(dir, 'admin-tokens');
    fs.writeFileSync(tokenFile, `ops:${token}\n`);
    const port = await freePort();
    const adminPort = await freePort();
    adminUrl = `http://127.0.0.1:${adminPort}`;
    server = await startServerProcess(process.execPath, [path.join(distDir, 'gatehouse.mjs')], {
      port,
      env: {
        PATH: process.env.PATH ?? '',
        DATA_DIR: dir,
        PORT: String(port),
        ADMIN_PORT: String(adminPort),
        ADMIN_TOKEN_FILE: tokenFile,
      },
    });
    await untilAccepts(adminPort);
  });
  afterAll(async () => {
    await server?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a bad line is 422 with every problem, and nothing is written', async () => {
    const response = await send(
      lines({ id: 'cuid-1', email: 'ada@example.com' }, { id: 'cuid-2', email: 'nope' }),
    );
    expect(response.status).toBe(422);
    const body = (await response.json()) as {
      error: { code: string };
      written: boolean;
      problems: Array<{ line: number; field: string }>;
    };
    expect(body.error.code).toBe('import_refused');
    expect(body.written).toBe(false);
    expect(body.problems).toEqual([
      { line: 2, field: 'email', message: 'must be an email address' },
    ]);
    expect(
      (
        await fetch(`${adminUrl}/api/admin/users/cuid-1`, {
          headers: { authorization: `Bearer ${token}` },
        })
      ).status,
    ).toBe(404);
  });

  it('check reports, then the import writes; the kept id is a user of the API', async () => {
    const body = lines(
      { id: 'cuid-1', email: 'ada@example.com', passwordHash: null },
      { id: 'cuid-2', email: 'bob@example.com', emailVerified: true },
    );
    const checked = await send(body, '?check=true');
    expect(checked.status).toBe(200);
    expect(await checked.json()).toMatchObject({ added: 2, written: false });
    const imported = await send(body);
    expect(imported.status).toBe(200);
    expect(await imported.json()).toMatchObject({ added: 2, written: true });
    const shown = await fetch(`${adminUrl}/api/admin/users/cuid-2`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(shown.status).toBe(200);
    expect(await shown.json()).toMatchObject({
      id: 'cuid-2',
      email: 'bob@example.com',
      emailVerified: true,
    });
    const again = await send(body);
    expect(await again.json()).toMatchObject({ added: 0, unchanged: 2, written: true });
  });

  it('a body that is not JSON Lines is 415, a bad check 422', async () => {
    expect((await send('{}', '', 'application/json')).status).toBe(415);
    expect((await send('', '?check=maybe')).status).toBe(422);
  });
});
