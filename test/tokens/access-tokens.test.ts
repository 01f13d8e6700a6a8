import { decodeJwt } from 'jose';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  newAccessToken as mintRandomToken,
  wellFormedAccessToken,
} from '../../src/users/access-tokens.js';
import { databaseBackends } from '../helpers/backends.js';
import { errorCode, postWithCsrf } from '../helpers/account-requests.js';
import { Client } from '../helpers/client.js';
import type { TestServer } from '../helpers/server.js';
import {
  activeOf,
  introspect,
  newAccessToken,
  password,
  signedIn,
  tokenServerFor,
  tokenOf,
} from './token-helpers.js';

// Personal access tokens (adoption spec §4): made from the account API, shown once, `gat_` and
// a checksum, taken as a bearer by GET /api/auth/token and by introspection only, ended by
// their revoke and by what ends every session. SQLite and PostgreSQL.

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

interface Listed {
  tokens: { id: string; name: string; lastUsedAt: string | null; expiresAt: string | null }[];
}

describe('the token format', () => {
  it('has a fixed prefix and a checksum a scanner (or a typo) can tell', () => {
    const token = mintRandomToken();
    expect(token).toMatch(/^gat_[0-9A-Za-z]{36}$/);
    expect(wellFormedAccessToken(token)).toBe(true);
    // One character changed anywhere in the random part fails the checksum.
    const changed = `${token.slice(0, 10)}${token[10] === 'a' ? 'b' : 'a'}${token.slice(11)}`;
    expect(wellFormedAccessToken(changed)).toBe(false);
    expect(new Set(Array.from({ length: 200 }, mintRandomToken)).size).toBe(200);
  });
});

describe.each(databaseBackends('access-tokens'))('personal access tokens on $name', (backend) => {
  const serverOf = tokenServerFor(backend);
  let server: TestServer;
  beforeEach(() => {
    if (!backend.skip) server = serverOf();
  });

  it.skipIf(backend.skip)(
    'made once, listed without the secret, used for a JWT and introspection, then revoked',
    async () => {
      const { client, userId } = await signedIn(server, 'ada@example.com');
      const made = await newAccessToken(client, 'nightly export', { expiresInDays: 30 });
      expect(made.token).toMatch(/^gat_/);
      expect(new Date(made.expiresAt ?? 0).getTime()).toBeGreaterThan(Date.now() + 29 * 86_400_000);
      const listed = (await (await client.get('/api/account/tokens')).json()) as Listed;
      expect(listed.tokens).toEqual([
        expect.objectContaining({ id: made.id, name: 'nightly export', lastUsedAt: null }),
      ]);
      expect(JSON.stringify(listed)).not.toContain(made.token);
      const stored = await server.db.selectFrom('access_tokens').selectAll().execute();
      expect(JSON.stringify(stored)).not.toContain(made.token);

      // A script with only the token: no cookie.
      const script = new Client(server.url);
      const { response, body } = await tokenOf(script, bearer(made.token));
      expect(response.status).toBe(200);
      const claims = decodeJwt(body.token);
      expect(claims).toMatchObject({ sub: userId, sid: made.id, amr: ['pat'] });
      expect(await activeOf(server, body.token)).toBe(true);
      const direct = (await (await introspect(server, made.token)).json()) as Record<
        string,
        unknown
      >;
      expect(direct).toMatchObject({ active: true, sub: userId, sid: made.id });
      const after = (await (await client.get('/api/account/tokens')).json()) as Listed;
      expect(after.tokens[0]?.lastUsedAt).not.toBeNull();

      const revoked = await postWithCsrf(client, `/api/account/tokens/${made.id}/revoke`, {});
      expect(revoked.status).toBe(204);
      expect((await tokenOf(script, bearer(made.token))).response.status).toBe(401);
      expect(await activeOf(server, made.token)).toBe(false);
      expect(await activeOf(server, body.token)).toBe(false);
      const again = await postWithCsrf(client, `/api/account/tokens/${made.id}/revoke`, {});
      expect(await errorCode(again)).toBe('404 not_found');
    },
  );

  it.skipIf(backend.skip)('never opens the account routes', async () => {
    const { client } = await signedIn(server, 'grace@example.com');
    const made = await newAccessToken(client);
    const script = new Client(server.url);
    expect(await errorCode(await script.get('/api/account', bearer(made.token)))).toBe(
      '401 unauthenticated',
    );
    expect(await errorCode(await script.get('/api/account/tokens', bearer(made.token)))).toBe(
      '401 unauthenticated',
    );
  });

  it.skipIf(backend.skip)('a mistyped token is refused before any lookup', async () => {
    const { client } = await signedIn(server, 'typo@example.com');
    const made = await newAccessToken(client);
    const last = made.token.at(-1) === 'A' ? 'B' : 'A';
    const typo = `${made.token.slice(0, -1)}${last}`;
    expect((await tokenOf(new Client(server.url), bearer(typo))).response.status).toBe(401);
    expect(await activeOf(server, typo)).toBe(false);
  });

  it.skipIf(backend.skip)('needs a recent password, a name, and sane days', async () => {
    const { client } = await signedIn(server, 'rules@example.com');
    const noName = await postWithCsrf(client, '/api/account/tokens', { name: '' });
    expect(await errorCode(noName)).toBe('422 invalid_field');
    const tooLong = await postWithCsrf(client, '/api/account/tokens', {
      name: 'x',
      expiresInDays: 4000,
    });
    expect(await errorCode(tooLong)).toBe('422 invalid_field');
    const stranger = new Client(server.url);
    expect(
      await errorCode(await postWithCsrf(stranger, '/api/account/tokens', { name: 'x' })),
    ).toBe('401 unauthenticated');
  });

  it.skipIf(backend.skip)(
    'ended by "sign out everywhere else", a password change, a lock and a disable',
    async () => {
      const { client, userId } = await signedIn(server, 'linus@example.com');
      const first = await newAccessToken(client, 'one');
      const others = await postWithCsrf(client, '/api/account/sessions/revoke-others', {});
      expect(others.status).toBe(200);
      expect(await activeOf(server, first.token)).toBe(false);

      const second = await newAccessToken(client, 'two');
      const changed = await postWithCsrf(client, '/api/account/password/change', {
        currentPassword: password,
        newPassword: 'another long passphrase for linus',
      });
      expect(changed.status).toBe(200);
      expect(await activeOf(server, second.token)).toBe(false);

      const third = await newAccessToken(client, 'three');
      await server.services.users.setDisabled(userId, true);
      expect(await activeOf(server, third.token)).toBe(false);
      // Enabled again, the token stays ended: a disable ended it for good.
      await server.services.users.setDisabled(userId, false);
      expect(await activeOf(server, third.token)).toBe(false);
      const listed = (await (await new Client(server.url).get('/api/account/tokens')).json()) as {
        tokens?: unknown;
      };
      expect(listed.tokens).toBeUndefined();
    },
  );
});
