import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../helpers/client.js';
import { startIdentityProvider, type IdentityProvider } from '../helpers/oidc-idp.js';
import { firstPass } from '../helpers/passes.js';
import {
  freePort,
  startServerProcess,
  untilAccepts,
  untilOutput,
  type ServerProcess,
} from '../helpers/processes.js';
import { distDir, runNode } from '../helpers/spawn.js';

/*
 * The service as operators run it (dist/, configured by Auth.js's variables only), against a
 * real OpenID Connect provider: the start line names the provider, a new person signs up with
 * it, and the admin API and the CLI list and remove the identity, each recorded.
 */

const token = 'ops-token-0123456789abcdef0123456789abcdef';
const clientId = 'gatehouse-operators';
const clientSecret = 'operators-client-secret-0123456789';

describe.runIf(firstPass)('identities, as operators see them', () => {
  let dir: string;
  let idp: IdentityProvider;
  let server: ServerProcess;
  let publicUrl: string;
  let adminUrl: string;
  let env: Record<string, string>;

  const api = (route: string, init: RequestInit = {}) =>
    fetch(`${adminUrl}/api/admin${route}`, {
      ...init,
      headers: { authorization: `Bearer ${token}` },
    });
  const cli = (args: string[]) => runNode('gatehouse-cli.cjs', args, env);

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-identity-ops-'));
    const tokenFile = path.join(dir, 'admin-tokens');
    fs.writeFileSync(tokenFile, `ops:${token}\n`);
    fs.writeFileSync(path.join(dir, 'oidc-secret'), `${clientSecret}\n`);
    idp = await startIdentityProvider();
    const port = await freePort();
    const adminPort = await freePort();
    publicUrl = `http://127.0.0.1:${port}`;
    adminUrl = `http://127.0.0.1:${adminPort}`;
    idp.setClients([
      { clientId, clientSecret, redirectUris: [`${publicUrl}/api/auth/callback/oidc`] },
    ]);
    env = {
      DATA_DIR: dir,
      AUTH_URL: publicUrl,
      AUTH_OIDC_ISSUER: idp.issuer,
      AUTH_OIDC_ID: clientId,
      AUTH_OIDC_SECRET_FILE: path.join(dir, 'oidc-secret'),
      AUTH_OIDC_NAME: 'Acme SSO',
      AUTH_OIDC_SIGNUP: 'open',
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
    await idp?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the start line names the providers; the secret never appears in the output', async () => {
    // Written once the service listens.
    await untilOutput(server.output, 'started in');
    expect(server.output()).toContain('sign-in with oidc');
    expect(server.output()).not.toContain(clientSecret);
  });

  it('a sign-up by the provider, listed and removed by the admin API and the CLI', async () => {
    idp.login({ sub: 'op-1', email: 'opal@example.com', emailVerified: true, name: 'Opal' });
    const browser = new Client(publicUrl);
    const csrfToken = await browser.csrfToken();
    const start = await browser.postForm('/api/auth/signin/oidc', { csrfToken });
    const back = new URL(await idp.followAuthorization(start.headers.get('location') ?? ''));
    const landed = await browser.get(`${back.pathname}${back.search}`);
    // Signed in, back at AUTH_URL (Auth.js's default callbackUrl).
    expect(landed.headers.get('location')).toBe(publicUrl);
    const { user } = (await browser.session()) as { user: { id: string; email: string } };
    expect(user.email).toBe('opal@example.com');

    const listed = await api(`/users/${user.id}/identities`);
    expect(listed.status).toBe(200);
    const { identities } = (await listed.json()) as {
      identities: { id: string; provider: string; email: string }[];
    };
    expect(identities).toEqual([
      expect.objectContaining({ provider: 'oidc', email: 'opal@example.com' }),
    ]);
    const byCli = await cli(['users', 'identities', '--email', 'opal@example.com']);
    expect(byCli.code, byCli.stderr).toBe(0);
    expect(byCli.stdout).toContain(`${identities[0]?.id}  oidc  opal@example.com`);

    const unknown = await cli([
      'users',
      'remove-identity',
      '--email',
      'opal@example.com',
      '--id',
      'nope',
    ]);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('has no identity nope');
    const removed = await api(`/users/${user.id}/identities/${identities[0]?.id}/remove`, {
      method: 'POST',
    });
    expect(removed.status).toBe(204);
    // The owner is told, as for an unlink of their own (mail is held in development).
    const outbox = (await (await api('/mail?limit=100')).json()) as {
      mail: { kind: string; to: string; subject: string }[];
    };
    expect(outbox.mail).toContainEqual(
      expect.objectContaining({
        kind: 'identity-unlinked-notice',
        to: 'opal@example.com',
        subject: 'Sign-in with Acme SSO was removed from your Gatehouse account',
      }),
    );
    expect((await (await api(`/users/${user.id}/identities`)).json()) as unknown).toEqual({
      identities: [],
    });
    const again = await api(`/users/${user.id}/identities/${identities[0]?.id}/remove`, {
      method: 'POST',
    });
    expect(again.status).toBe(404);

    // Recorded with the token's label as actor.
    const audit = (await (await api('/audit?limit=1000')).json()) as {
      entries: { type: string; actor: string | null }[];
    };
    expect(audit.entries).toContainEqual(
      expect.objectContaining({ type: 'identity_unlinked', actor: 'admin API (ops)' }),
    );
    // Unlinked, the identity is a new person's again: sign-up is open, the address is taken,
    // so it is offered to that account, never signed in.
    const fresh = new Client(publicUrl);
    const retry = await fresh.postForm('/api/auth/signin/oidc', {
      csrfToken: await fresh.csrfToken(),
    });
    const back2 = new URL(await idp.followAuthorization(retry.headers.get('location') ?? ''));
    const offered = await fresh.get(`${back2.pathname}${back2.search}`);
    expect(offered.headers.get('location')).toContain('error=OAuthAccountNotLinked');
  });
});
