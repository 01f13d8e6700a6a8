import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { Client } from '../helpers/client.js';
import { connects } from '../helpers/metrics.js';
import { firstPass } from '../helpers/passes.js';
import {
  freePort,
  startServerProcess,
  untilAccepts,
  untilOutput,
  type ServerProcess,
} from '../helpers/processes.js';
import { distDir, runNode } from '../helpers/spawn.js';

const password = 'a long and fine password';
const opsToken = 'ops-token-0123456789abcdef0123456789abcdef';
const oldToken = 'old-token-0123456789abcdef0123456789abcdef';

interface Summary {
  id: string;
  email: string;
  name: string;
  emailVerified: boolean;
  disabled: boolean;
  locked: boolean;
  secondFactors: string[];
}

/*
 * The admin API over one running service: every operation the CLI has, done once through the
 * CLI and once through the API on users alike, must leave the same state; tokens are refused
 * alike; the public port never answers it. Its subject is no fast path: first pass only.
 */
describe.runIf(firstPass)('the admin API', () => {
  let dir: string;
  let tokenFile: string;
  let server: ServerProcess;
  let publicUrl: string;
  let adminUrl: string;
  let env: Record<string, string>;

  const cli = (args: string[], stdin?: string) => runNode('gatehouse-cli.cjs', args, env, stdin);
  const api = (route: string, init: RequestInit & { token?: string | null } = {}) => {
    const { token = opsToken, ...rest } = init;
    const headers: Record<string, string> = {
      ...(token !== null && { authorization: `Bearer ${token}` }),
      ...(rest.body !== undefined && { 'content-type': 'application/json' }),
    };
    return fetch(`${adminUrl}/api/admin${route}`, { ...rest, headers });
  };
  const post = (route: string, body?: unknown) =>
    api(route, { method: 'POST', ...(body !== undefined && { body: JSON.stringify(body) }) });
  const show = async (id: string) => (await (await api(`/users/${id}`)).json()) as Summary;

  async function addUser(email: string): Promise<string> {
    const added = await cli(
      ['users', 'add', '--email', email, '--name', 'Someone', '--password-stdin'],
      password,
    );
    expect(added.code, added.stderr).toBe(0);
    return /id ([0-9a-f-]{36})/.exec(added.stdout)?.[1] as string;
  }

  /** Signs in with the password and turns TOTP on, confirmed with the current code. */
  async function enrolTotp(email: string): Promise<void> {
    const client = new Client(publicUrl);
    expect((await client.signIn(email, password)).status).toBe(200);
    const send = async (route: string, body: Record<string, string> = {}) =>
      client.request(route, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ csrfToken: await client.csrfToken(), ...body }),
      });
    const setup = await send('/api/account/totp/setup');
    expect(setup.status).toBe(200);
    const { secret } = (await setup.json()) as { secret: string };
    const code = TOTP.generate({ secret: Secret.fromBase32(secret) });
    expect((await send('/api/account/totp/confirm', { code })).status).toBe(200);
  }
  const passwordAloneSignsIn = async (email: string) => {
    const client = new Client(publicUrl);
    const { url } = (await (await client.signIn(email, password)).json()) as { url: string };
    return new URL(url).searchParams.get('code') === null && client.sessionCookie() !== undefined;
  };

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-admin-'));
    tokenFile = path.join(dir, 'admin-tokens');
    fs.writeFileSync(
      tokenFile,
      `# rotation: old goes once the app uses ops\nops:${opsToken}\nold:${oldToken}\n`,
    );
    const port = await freePort();
    const adminPort = await freePort();
    publicUrl = `http://127.0.0.1:${port}`;
    adminUrl = `http://127.0.0.1:${adminPort}`;
    env = {
      DATA_DIR: dir,
      AUTH_URL: publicUrl,
      THROTTLE_EMAIL_MAX_FAILURES: '2',
    };
    server = await startServerProcess(process.execPath, [path.join(distDir, 'gatehouse.mjs')], {
      port,
      env: {
        PATH: process.env.PATH ?? '',
        ...env,
        PORT: String(port),
        ADMIN_PORT: String(adminPort),
        ADMIN_TOKEN_FILE: tokenFile,
        LOG_LEVEL: 'info',
      },
    });
    await untilAccepts(adminPort);
  });
  afterAll(async () => {
    await server?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a missing, wrong or removed token with the same bytes, and records the label, never the token', async () => {
    const answers = async (token: string | null) => {
      const response = await api('/users', { token });
      const headers: string[] = [];
      response.headers.forEach((value, name) => {
        if (name !== 'date') headers.push(`${name}: ${value}`);
      });
      return { status: response.status, headers, body: await response.text() };
    };
    const missing = await answers(null);
    expect(missing.status).toBe(401);
    expect(JSON.parse(missing.body)).toMatchObject({ error: { code: 'unauthenticated' } });
    expect(await answers('not-the-token-0123456789abcdef0123456789')).toEqual(missing);
    expect(await answers(`${opsToken}x`)).toEqual(missing);
    expect((await api('/users', { token: oldToken })).status).toBe(200);
    // Rotation: the old line removed, the file is read again (at most a second apart; polled,
    // as a loaded machine may take longer to get there).
    fs.writeFileSync(tokenFile, `ops:${opsToken}\n`);
    await expect.poll(async () => (await answers(oldToken)).status, { timeout: 15_000 }).toBe(401);
    expect(await answers(oldToken)).toEqual(missing);
    expect((await api('/users')).status).toBe(200);
    // Log lines leave through a writer of their own: wait for the call's.
    await untilOutput(server.output, '"actor":"ops"');
    expect(server.output()).not.toContain(opsToken);
  });

  it('is never served on the public port', async () => {
    const response = await fetch(`${publicUrl}/api/admin/users`, {
      headers: { authorization: `Bearer ${opsToken}` },
    });
    expect(response.status).toBe(404);
  });

  it('lists users in pages with a cursor, and searches them', async () => {
    for (const name of ['page-a', 'page-b', 'page-c']) await addUser(`${name}@example.com`);
    const first = (await (await api('/users?query=PAGE-&limit=2')).json()) as {
      users: Summary[];
      nextCursor: string | null;
    };
    expect(first.users.map((user) => user.email)).toEqual([
      'page-a@example.com',
      'page-b@example.com',
    ]);
    const second = (await (
      await api(`/users?query=page-&limit=2&cursor=${first.nextCursor ?? ''}`)
    ).json()) as { users: Summary[]; nextCursor: string | null };
    expect(second).toMatchObject({ users: [{ email: 'page-c@example.com' }], nextCursor: null });
    expect((await api('/users?cursor=!!')).status).toBe(422);
    expect((await api('/users?limit=0')).status).toBe(422);
    // The CLI's list is the same users.
    const listed = await cli(['users', 'list', '--json']);
    const all = (await (await api('/users?limit=500')).json()) as { users: Summary[] };
    expect((JSON.parse(listed.stdout) as Summary[]).map((user) => user.email)).toEqual(
      all.users.map((user) => user.email),
    );
  });

  it('does each CLI operation through the API with the same outcome', async () => {
    const byCli = await addUser('cli@example.com');
    const byApi = await addUser('api@example.com');
    const same = async (expected: Partial<Summary>) => {
      expect(await show(byCli)).toMatchObject(expected);
      expect(await show(byApi)).toMatchObject(expected);
    };

    expect((await cli(['users', 'verify-email', '--email', 'cli@example.com'])).code).toBe(0);
    expect((await post(`/users/${byApi}/verify-email`)).status).toBe(200);
    await same({ emailVerified: true });

    expect((await cli(['users', 'disable', '--email', 'cli@example.com'])).code).toBe(0);
    expect((await post(`/users/${byApi}/disable`)).status).toBe(200);
    await same({ disabled: true });
    expect((await cli(['users', 'enable', '--email', 'cli@example.com'])).code).toBe(0);
    expect((await post(`/users/${byApi}/enable`)).status).toBe(200);
    await same({ disabled: false });

    expect(
      (await cli(['users', 'rename', '--email', 'cli@example.com', '--name', 'Renamed'])).code,
    ).toBe(0);
    expect((await post(`/users/${byApi}/name`, { name: 'Renamed' })).status).toBe(200);
    await same({ name: 'Renamed' });
    expect((await post(`/users/${byApi}/name`, { name: ' ' })).status).toBe(422);

    // Failed sign-ins lock each address (THROTTLE_EMAIL_MAX_FAILURES=2); unlock lifts it.
    for (const email of ['cli@example.com', 'api@example.com'])
      for (let i = 0; i < 2; i += 1) await new Client(publicUrl).signIn(email, 'wrong password');
    await same({ locked: true });
    expect((await cli(['users', 'unlock', '--email', 'cli@example.com'])).code).toBe(0);
    expect((await post(`/users/${byApi}/unlock`)).status).toBe(200);
    await same({ locked: false });

    // An operator's way out for a lost authenticator: TOTP off, the password alone signs in.
    for (const email of ['cli@example.com', 'api@example.com']) {
      await enrolTotp(email);
      expect(await passwordAloneSignsIn(email)).toBe(false);
    }
    await same({ secondFactors: ['totp'] });
    const reset = await cli(['users', 'reset-second-factor', '--email', 'cli@example.com']);
    expect(reset.code, reset.stderr).toBe(0);
    const resetByApi = await post(`/users/${byApi}/reset-second-factor`);
    expect(resetByApi.status).toBe(200);
    expect(await resetByApi.json()).toMatchObject({ id: byApi, secondFactors: [] });
    await same({ secondFactors: [] });
    for (const email of ['cli@example.com', 'api@example.com'])
      expect(await passwordAloneSignsIn(email)).toBe(true);
    expect(
      (await post('/users/00000000-0000-4000-8000-000000000000/reset-second-factor')).status,
    ).toBe(404);
    // With the passkeys too (the way out of a passkey-only account that lost its passkey).
    const withPasskeys = await cli([
      'users',
      'reset-second-factor',
      '--email',
      'cli@example.com',
      '--passkeys',
    ]);
    expect(withPasskeys.code, withPasskeys.stderr).toBe(0);
    expect((await post(`/users/${byApi}/reset-second-factor`, { passkeys: true })).status).toBe(
      200,
    );
    expect((await post(`/users/${byApi}/reset-second-factor`, { passkeys: 'yes' })).status).toBe(
      422,
    );

    const moved = await cli([
      'users',
      'set-email',
      '--email',
      'cli@example.com',
      '--new-email',
      'cli2@example.com',
    ]);
    expect(moved.code, moved.stderr).toBe(0);
    expect((await post(`/users/${byApi}/email`, { email: 'API2@example.com' })).status).toBe(200);
    expect(await show(byCli)).toMatchObject({ email: 'cli2@example.com', emailVerified: false });
    expect(await show(byApi)).toMatchObject({ email: 'api2@example.com', emailVerified: false });
    const taken = await post(`/users/${byApi}/email`, { email: 'cli2@example.com' });
    expect(taken.status).toBe(409);

    const invited = await cli(['users', 'invite', '--email', 'invited-cli@example.com']);
    expect(invited.code, invited.stderr).toBe(0);
    const invitation = await post('/invitations', { email: 'invited-api@example.com' });
    expect(invitation.status).toBe(201);
    const issued = (await invitation.json()) as Record<string, unknown>;
    expect(Object.keys(issued).sort()).toEqual(['expiresAt', 'id']);
    expect((await post('/invitations', { email: 'api2@example.com' })).status).toBe(409);

    // Development without SMTP_URL holds mail: both invitations are in the outbox.
    const mailList = (await (await api('/mail?state=held')).json()) as {
      mail: { id: string; to: string }[];
    };
    const cliMail = JSON.parse(
      (await cli(['mail', 'list', '--state', 'held', '--json'])).stdout,
    ) as {
      id: string;
    }[];
    expect(mailList.mail.map((mail) => mail.id)).toEqual(cliMail.map((mail) => mail.id));
    const [first, second] = mailList.mail;
    expect((await cli(['mail', 'retry', first?.id ?? ''])).code).toBe(0);
    expect((await post(`/mail/${second?.id ?? ''}/retry`)).status).toBe(200);
    expect((await post(`/mail/${second?.id ?? ''}/retry`)).status).toBe(409);
    expect((await post('/mail/00000000-0000-4000-8000-000000000000/retry')).status).toBe(404);

    // Sessions: each user signed in once, then every session ended by one caller each.
    for (const email of ['cli2@example.com', 'api2@example.com']) {
      const client = new Client(publicUrl);
      expect((await client.signIn(email, password)).status).toBe(200);
    }
    const sessionsOf = async (id: string) =>
      ((await (await api(`/users/${id}/sessions`)).json()) as { sessions: { id: string }[] })
        .sessions;
    expect(await sessionsOf(byApi)).toHaveLength(1);
    // One session ended by its id, by each caller; the user's others stay.
    const older = new Client(publicUrl);
    await older.signIn('api2@example.com', password);
    const third = new Client(publicUrl);
    await third.signIn('api2@example.com', password);
    const [newest, middle] = await sessionsOf(byApi);
    expect((await post(`/users/${byApi}/sessions/${newest?.id ?? ''}/revoke`)).status).toBe(204);
    expect(await third.session()).toBeNull();
    expect(await older.session()).not.toBeNull();
    expect((await post(`/users/${byApi}/sessions/${newest?.id ?? ''}/revoke`)).status).toBe(404);
    const listed = await cli(['users', 'sessions', '--email', 'api2@example.com', '--json']);
    expect((JSON.parse(listed.stdout) as { id: string }[]).map((s) => s.id)).toContain(middle?.id);
    const one = await cli([
      'users',
      'revoke-session',
      '--email',
      'api2@example.com',
      '--id',
      middle?.id ?? '',
    ]);
    expect(one.code, one.stderr).toBe(0);
    expect(await older.session()).toBeNull();
    const gone = await cli([
      'users',
      'revoke-session',
      '--email',
      'api2@example.com',
      '--id',
      middle?.id ?? '',
    ]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('has no live session');
    expect(await sessionsOf(byApi)).toHaveLength(1);
    expect((await cli(['users', 'revoke-sessions', '--email', 'cli2@example.com'])).code).toBe(0);
    expect(await (await post(`/users/${byApi}/sessions/revoke`)).json()).toEqual({ revoked: 1 });
    expect(await sessionsOf(byCli)).toEqual([]);
    expect(await sessionsOf(byApi)).toEqual([]);

    // The audit log holds both callers' actions, and both read the same verdict.
    const verify = await cli(['audit', 'verify']);
    expect(verify.code, verify.stderr).toBe(0);
    expect(await (await api('/audit/verify')).json()).toMatchObject({ ok: true });
    const audit = (await (await api('/audit?limit=1000')).json()) as {
      entries: { actor: string | null }[];
    };
    const actors = new Set(audit.entries.map((entry) => entry.actor));
    expect(actors).toContain('gatehouse CLI');
    expect(actors).toContain('admin API (ops)');
    const resets = (audit.entries as { actor: string | null; type: string }[]).filter(
      (entry) => entry.type === 'totp_disabled',
    );
    expect(resets.map((entry) => entry.actor).sort()).toEqual(['admin API (ops)', 'gatehouse CLI']);

    expect((await cli(['users', 'remove', '--email', 'cli2@example.com'])).code).toBe(0);
    expect((await api(`/users/${byApi}`, { method: 'DELETE' })).status).toBe(204);
    expect((await api(`/users/${byCli}`)).status).toBe(404);
    expect((await api(`/users/${byApi}`)).status).toBe(404);
    expect((await post(`/users/${byApi}/disable`)).status).toBe(404);
  });

  it('starts no listener without a usable token, and says so; ADMIN_PORT may not be PORT', async () => {
    const emptyFile = path.join(dir, 'no-tokens');
    fs.writeFileSync(emptyFile, 'ops:tiny-token\n');
    const port = await freePort();
    const adminPort = await freePort();
    const other = await startServerProcess(
      process.execPath,
      [path.join(distDir, 'gatehouse.mjs')],
      {
        port,
        env: {
          PATH: process.env.PATH ?? '',
          DATA_DIR: path.join(dir, 'other'),
          PORT: String(port),
          ADMIN_PORT: String(adminPort),
          ADMIN_TOKEN_FILE: emptyFile,
          LOG_LEVEL: 'warn',
        },
      },
    );
    try {
      await untilOutput(other.output, 'admin API off');
      expect(other.output()).not.toContain('tiny-token');
      expect(await connects('127.0.0.1', adminPort)).toBe(false);
    } finally {
      await other.stop();
    }
    const same = parseConfig({ PORT: '3000', ADMIN_PORT: '3000' }, { requireSecret: false });
    expect(same.ok).toBe(false);
    expect(same.ok ? [] : same.problems).toContainEqual(
      expect.stringMatching(/^ADMIN_PORT: must differ from PORT/),
    );
  });
});
