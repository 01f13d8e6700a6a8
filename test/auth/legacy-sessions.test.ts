import { hkdfSync, randomUUID } from 'node:crypto';
import { encode } from '@auth/core/jwt';
import { EncryptJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  serviceDatabase,
  startAccountService,
  type AccountService,
} from '../account/account-service.js';
import { Client, sessionCookieName } from '../helpers/client.js';
import { hasPostgres } from '../helpers/postgres.js';

const oldSecret = 'the-old-app-secret-0123456789abcdefghijklmnopqrstuvwxyz';
const day = 86_400;
const users = [
  { id: 'clx0ada0000001', email: 'ada@example.com', name: 'Ada' },
  { id: 'clx0bob0000002', email: 'bob@example.com', name: 'Bob' },
  { id: 'clx0cy00000003', email: 'cy@example.com', name: 'Cy' },
  { id: 'clx0dee0000004', email: 'dee@example.com', name: 'Dee' },
  { id: 'clx0eve0000005', email: 'eve@example.com', name: 'Eve' },
  { id: 'clx0fay0000006', email: 'fay@example.com', name: 'Fay' },
  { id: 'clx0gus0000007', email: 'gus@example.com', name: 'Gus' },
  { id: 'clx0hal0000008', email: 'hal@example.com', name: 'Hal' },
  { id: 'clx0ivo0000009', email: 'ivo@example.com', name: 'Ivo' },
];
const jsonl = users.map((user) => JSON.stringify(user)).join('\n');

/** An Auth.js v5 session token, made by Auth.js's own encoder. */
const v5Token = (claims: Record<string, unknown>, secret = oldSecret, maxAge = 30 * day) =>
  encode({ token: claims, secret, salt: sessionCookieName, maxAge });

/** A NextAuth v4 session token, as next-auth 4's `jwt.encode` makes it (jose, HKDF, A256GCM). */
async function v4Token(claims: Record<string, unknown>, secret = oldSecret, maxAge = 30 * day) {
  const key = new Uint8Array(
    hkdfSync('sha256', secret, '', 'NextAuth.js Generated Encryption Key', 32),
  );
  const now = Math.floor(Date.now() / 1000);
  return new EncryptJWT(claims)
    .setProtectedHeader({ alg: 'dir', enc: 'A256GCM' })
    .setIssuedAt()
    .setExpirationTime(now + maxAge)
    .setJti(randomUUID())
    .encrypt(key);
}

const claimsOf = (user: (typeof users)[number]) => ({
  sub: user.id,
  name: user.name,
  email: user.email,
  picture: null,
});

/** A browser holding only the old app's cookie. */
function browserWith(url: string, name: string, token: string): Client {
  const client = new Client(url);
  client.cookies.set(name, token);
  return client;
}

const sessionOf = async (client: Client) =>
  (await (await client.get('/api/auth/session')).json()) as { user?: { id: string } } | null;

// Each pass of `npm test` runs it with the fast paths on, then off (test/helpers/passes.ts).
const mode = process.env.GATEHOUSE_TEST_FAST_PATHS === 'off' ? 'off' : 'on';

for (const backend of ['sqlite', 'postgres'] as const) {
  describe.skipIf(backend === 'postgres' && !hasPostgres)(
    `an old app's sessions carried over (${backend}, fast paths ${mode})`,
    () => {
      let service: AccountService;
      let dispose: () => Promise<void>;
      const until = new Date(Date.now() + 30 * day * 1000).toISOString().slice(0, 10);

      beforeAll(async () => {
        const database = await serviceDatabase(backend);
        dispose = database.dispose;
        service = await startAccountService(database.env, {
          LEGACY_AUTH_SECRET: `an older secret 0123456789abcdefghijklmnop,${oldSecret}`,
          LEGACY_SESSIONS_UNTIL: until,
        });
        expect((await service.cli(['users', 'import', '-'], jsonl)).code).toBe(0);
        await service.addUser('native@example.com', 'a long and fine password');
      });
      afterAll(async () => {
        await service.stop();
        await dispose();
      });

      it('a v5 cookie is exchanged: same user, a Gatehouse cookie, one session however often it is read', async () => {
        const old = await v5Token(claimsOf(users[0]!));
        const browser = browserWith(service.url, sessionCookieName, old);
        const response = await browser.get('/api/auth/session');
        expect(response.status).toBe(200);
        const body = (await response.json()) as { user: { id: string; email: string } };
        expect(body.user).toMatchObject({ id: users[0]!.id, email: users[0]!.email });
        const fresh = browser.sessionCookie();
        expect(fresh).toBeDefined();
        expect(fresh).not.toBe(old);
        // The next read is an ordinary Gatehouse read.
        expect((await sessionOf(browser))?.user?.id).toBe(users[0]!.id);
        // The same old token again (a second tab that still has it) maps to that one session.
        const tab = browserWith(service.url, sessionCookieName, old);
        expect((await sessionOf(tab))?.user?.id).toBe(users[0]!.id);
        const listed = (await (await browser.get('/api/account/sessions')).json()) as {
          sessions: Array<{ method: string }>;
        };
        expect(listed.sessions).toHaveLength(1);
        expect(listed.sessions[0]?.method).toBe('carried_over');
        const events = (await (await browser.get('/api/account/events')).json()) as {
          events: Array<{ type: string }>;
        };
        expect(events.events.filter((event) => event.type === 'session_migrated')).toHaveLength(1);
      });

      it('a NextAuth v4 cookie is exchanged, and its old cookie cleared', async () => {
        const browser = browserWith(
          service.url,
          'next-auth.session-token',
          await v4Token(claimsOf(users[1]!)),
        );
        const response = await browser.get('/api/auth/session');
        const cookies = response.headers.getSetCookie();
        expect(cookies.some((line) => /^next-auth\.session-token=;.*Max-Age=0/.test(line))).toBe(
          true,
        );
        expect(((await response.json()) as { user: { id: string } }).user.id).toBe(users[1]!.id);
        expect(browser.cookies.has('next-auth.session-token')).toBe(false);
        expect((await sessionOf(browser))?.user?.id).toBe(users[1]!.id);
      });

      it('a token split into chunks (.0, .1), and one naming its user by `id` alone, are exchanged', async () => {
        const token = await v5Token({ ...claimsOf(users[7]!), padding: 'x'.repeat(3000) });
        const browser = new Client(service.url);
        browser.cookies.set(`${sessionCookieName}.0`, token.slice(0, 2000));
        browser.cookies.set(`${sessionCookieName}.1`, token.slice(2000));
        const response = await browser.get('/api/auth/session');
        expect(((await response.json()) as { user: { id: string } }).user.id).toBe(users[7]!.id);
        expect(
          response.headers
            .getSetCookie()
            .filter((line) => /^authjs\.session-token\.[01]=;/.test(line)),
        ).toHaveLength(2);
        const byId = browserWith(
          service.url,
          'next-auth.session-token',
          await v4Token({ id: users[7]!.id, email: users[7]!.email }),
        );
        expect((await sessionOf(byId))?.user?.id).toBe(users[7]!.id);
      });

      it('an old cookie left beside a Gatehouse session does not replace it', async () => {
        const first = browserWith(
          service.url,
          sessionCookieName,
          await v5Token(claimsOf(users[8]!)),
        );
        expect((await sessionOf(first))?.user?.id).toBe(users[8]!.id);
        // Nina signs in as herself; a stale old cookie of Ivo's is still in the jar.
        await service.addUser('nina@example.com', 'a long and fine password');
        const browser = new Client(service.url);
        expect((await browser.signIn('nina@example.com', 'a long and fine password')).status).toBe(
          200,
        );
        browser.cookies.set('next-auth.session-token', await v4Token(claimsOf(users[8]!)));
        const session = (await sessionOf(browser)) as { user?: { email?: string } } | null;
        expect(session?.user?.email).toBe('nina@example.com');
      });

      it('sign-out ends it for good: the old cookie opens nothing afterwards', async () => {
        const old = await v5Token(claimsOf(users[2]!));
        const browser = browserWith(service.url, sessionCookieName, old);
        expect((await sessionOf(browser))?.user?.id).toBe(users[2]!.id);
        expect((await browser.signOut()).status).toBe(200);
        expect(await sessionOf(browser)).toBeNull();
        const replay = browserWith(service.url, sessionCookieName, old);
        expect(await sessionOf(replay)).toBeNull();
        expect(replay.sessionCookie()).toBeUndefined();
      });

      it('a sign-out posted with an old cookie never read before ends it for good too', async () => {
        const old = await v5Token(claimsOf(users[6]!));
        const browser = browserWith(service.url, sessionCookieName, old);
        expect((await browser.signOut()).status).toBe(200);
        expect(browser.sessionCookie()).toBeUndefined();
        expect(await sessionOf(browserWith(service.url, sessionCookieName, old))).toBeNull();
      });

      it('refused: another secret, expired, a user not imported or unknown, a disabled one', async () => {
        const refused = [
          await v5Token(claimsOf(users[3]!), 'some other secret 0123456789abcdefghijklmnop'),
          await v5Token(claimsOf(users[3]!), oldSecret, -60),
          await v5Token({ sub: 'no-such-user', email: 'x@example.com' }),
        ];
        for (const token of refused) {
          const browser = browserWith(service.url, sessionCookieName, token);
          expect(await sessionOf(browser)).toBeNull();
        }
        const nativeId = (
          JSON.parse((await service.cli(['users', 'list', '--json'])).stdout) as Array<{
            id: string;
            email: string;
          }>
        ).find((user) => user.email === 'native@example.com')?.id;
        const native = browserWith(
          service.url,
          sessionCookieName,
          await v5Token({ sub: nativeId, email: 'native@example.com' }),
        );
        expect(await sessionOf(native)).toBeNull();
        expect((await service.cli(['users', 'disable', '--email', users[3]!.email])).code).toBe(0);
        const disabled = browserWith(
          service.url,
          sessionCookieName,
          await v5Token(claimsOf(users[3]!)),
        );
        expect(await sessionOf(disabled)).toBeNull();
      });

      it('a password change, or an operator ending every session, closes the cookies not yet exchanged', async () => {
        const user = users[4]!;
        const before = await v5Token(claimsOf(user));
        expect((await service.cli(['users', 'revoke-sessions', '--email', user.email])).code).toBe(
          0,
        );
        expect(await sessionOf(browserWith(service.url, sessionCookieName, before))).toBeNull();
        const other = users[5]!;
        const old = await v5Token(claimsOf(other));
        const changed = await service.cli(
          ['users', 'set-password', '--email', other.email, '--password-stdin'],
          'a brand new long password',
        );
        expect(changed.code).toBe(0);
        expect(await sessionOf(browserWith(service.url, sessionCookieName, old))).toBeNull();
      });
    },
  );
}

describe('after LEGACY_SESSIONS_UNTIL', () => {
  it('no old cookie is taken', async () => {
    const database = await serviceDatabase('sqlite');
    const service = await startAccountService(database.env, {
      LEGACY_AUTH_SECRET: oldSecret,
      LEGACY_SESSIONS_UNTIL: new Date(Date.now() - 60_000).toISOString(),
    });
    try {
      expect((await service.cli(['users', 'import', '-'], jsonl)).code).toBe(0);
      const browser = browserWith(
        service.url,
        sessionCookieName,
        await v5Token(claimsOf(users[0]!)),
      );
      expect(await sessionOf(browser)).toBeNull();
    } finally {
      await service.stop();
      await database.dispose();
    }
  });
});

describe('the old app’s secret kept as AUTH_SECRET (the guide’s way, so a roll-back keeps sessions too)', () => {
  it('an old cookie that opens under the current secret is still exchanged, and a Gatehouse cookie is not', async () => {
    const database = await serviceDatabase('sqlite');
    const service = await startAccountService(database.env, {
      AUTH_SECRET: oldSecret,
      LEGACY_AUTH_SECRET: oldSecret,
      LEGACY_SESSIONS_UNTIL: new Date(Date.now() + 86_400_000).toISOString(),
    });
    try {
      expect((await service.cli(['users', 'import', '-'], jsonl)).code).toBe(0);
      const old = await v5Token(claimsOf(users[0]!));
      const browser = browserWith(service.url, sessionCookieName, old);
      expect((await sessionOf(browser))?.user?.id).toBe(users[0]!.id);
      const exchanged = browser.sessionCookie();
      expect(exchanged).not.toBe(old);
      // The Gatehouse cookie reads as itself: no second exchange, no second session.
      expect((await sessionOf(browser))?.user?.id).toBe(users[0]!.id);
      const events = (await (await browser.get('/api/account/events')).json()) as {
        events: Array<{ type: string }>;
      };
      expect(events.events.filter((event) => event.type === 'session_migrated')).toHaveLength(1);
      const listed = (await (await browser.get('/api/account/sessions')).json()) as {
        sessions: unknown[];
      };
      expect(listed.sessions).toHaveLength(1);
    } finally {
      await service.stop();
      await database.dispose();
    }
  });
});
