import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../helpers/client.js';
import { hasPostgres } from '../helpers/postgres.js';
import { serviceDatabase, startAccountService, type AccountService } from './account-service.js';

/*
 * /api/account over real HTTP against the service in process, on SQLite and
 * on PostgreSQL (scripts/with-postgres.sh), with a short REAUTH_MAX_AGE and a low per-account
 * failure limit so that the recent window and the throttle can be seen to work.
 */

const password = 'correct horse battery staple';
const newPassword = 'a brand new and long passphrase';
const userAgent = 'AccountTest/1.0 (X11; Linux x86_64)';
const reauthMaxAgeSeconds = 2;

/** A browser: one cookie jar, a user agent. */
const browser = (service: AccountService) => new Client(service.url, { 'user-agent': userAgent });

async function signedIn(service: AccountService, email: string, pass = password) {
  const client = browser(service);
  const response = await client.signIn(email, pass);
  expect(response.status).toBe(200);
  expect(client.sessionCookie()).toBeDefined();
  return client;
}

async function postJson(
  client: Client,
  path: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
) {
  const csrfToken = await client.csrfToken();
  return client.request(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ csrfToken, ...body }),
  });
}

async function errorOf(response: Response) {
  const body = (await response.json()) as { error: { code: string; message: string } };
  return { status: response.status, code: body.error.code };
}

async function sessionUser(client: Client) {
  const session = (await client.session()) as { user?: { email: string } } | null;
  return session?.user?.email ?? null;
}

const backends = [
  { name: 'SQLite', backend: 'sqlite' as const, skip: false },
  { name: 'PostgreSQL', backend: 'postgres' as const, skip: !hasPostgres },
];

describe.each(backends)('/api/account on $name', ({ backend, skip }) => {
  let service: AccountService;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    if (skip) return;
    const database = await serviceDatabase(backend);
    dispose = database.dispose;
    service = await startAccountService(database.env, {
      REAUTH_MAX_AGE: String(reauthMaxAgeSeconds),
      THROTTLE_EMAIL_MAX_FAILURES: '3',
    });
    for (const name of ['ada', 'bob', 'cy', 'dee', 'eve']) {
      await service.addUser(`${name}@example.com`, password);
    }
  }, 60_000);
  afterAll(async () => {
    if (skip) return;
    await service.stop();
    await dispose();
  });

  it.skipIf(skip)(
    'without a session every route answers 401 unauthenticated, uncached',
    async () => {
      const client = browser(service);
      for (const path of ['/api/account', '/api/account/events']) {
        const response = await client.get(path);
        expect(response.headers.get('cache-control')).toBe('no-store');
        expect(await errorOf(response)).toEqual({ status: 401, code: 'unauthenticated' });
      }
      const posted = await postJson(client, '/api/account/profile', { name: 'Nobody' });
      expect(await errorOf(posted)).toEqual({ status: 401, code: 'unauthenticated' });
      // A session cookie that does not read is no session either.
      client.cookies.set('authjs.session-token', 'forged');
      expect(await errorOf(await client.get('/api/account'))).toEqual({
        status: 401,
        code: 'unauthenticated',
      });
    },
  );

  it.skipIf(skip)('shows the signed-in account', async () => {
    const client = await signedIn(service, 'ada@example.com');
    const response = await client.get('/api/account');
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toEqual({
      user: {
        id: expect.any(String) as string,
        email: 'ada@example.com',
        name: expect.any(String) as string,
        emailVerified: false,
      },
      secondFactors: { totp: false, passkeys: 0, recoveryCodes: 0 },
      recentUntil: expect.any(String) as string,
    });
  });

  it.skipIf(skip)('every POST needs the CSRF token and its cookie, from this site', async () => {
    const client = await signedIn(service, 'ada@example.com');
    const csrfToken = await client.csrfToken();
    const post = (body: string, headers: Record<string, string>) =>
      client.request('/api/account/profile', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
      });
    const refused = [
      await post(JSON.stringify({ name: 'Ada' }), {}),
      await post(JSON.stringify({ name: 'Ada', csrfToken: `${csrfToken}0` }), {}),
      await post(JSON.stringify({ name: 'Ada' }), { 'x-csrf-token': 'nope' }),
      await post(JSON.stringify({ name: 'Ada', csrfToken }), { origin: 'https://evil.example' }),
      await post(JSON.stringify({ name: 'Ada', csrfToken }), { origin: 'null' }),
      await post(JSON.stringify({ name: 'Ada', csrfToken }), { 'sec-fetch-site': 'cross-site' }),
      // The right token without its cookie.
      await post(JSON.stringify({ name: 'Ada', csrfToken }), {
        cookie: `authjs.session-token=${client.sessionCookie() ?? ''}`,
      }),
    ];
    for (const response of refused) {
      expect(await errorOf(response)).toEqual({ status: 403, code: 'csrf' });
    }
    const byHeader = await post(JSON.stringify({ name: 'Ada Header' }), {
      'x-csrf-token': csrfToken,
      origin: service.url,
      'sec-fetch-site': 'same-origin',
    });
    expect(byHeader.status).toBe(200);
    const byForm = await client.postForm('/api/account/profile', { csrfToken, name: 'Ada Form' });
    expect(byForm.status).toBe(200);
    expect(await byForm.json()).toMatchObject({ user: { name: 'Ada Form' } });
  });

  it.skipIf(skip)('renames, and refuses a bad body with a 4xx', async () => {
    const client = await signedIn(service, 'ada@example.com');
    const renamed = await postJson(client, '/api/account/profile', { name: '  Ada Lovelace  ' });
    expect(await renamed.json()).toMatchObject({ user: { name: 'Ada Lovelace' } });
    expect(await client.session()).toMatchObject({ user: { name: 'Ada Lovelace' } });
    for (const name of ['', '   ', 'x'.repeat(201), 'tab\there', 42, null]) {
      const response = await postJson(client, '/api/account/profile', { name });
      expect(await errorOf(response)).toEqual({ status: 422, code: 'invalid_field' });
    }
    const csrfToken = await client.csrfToken();
    const raw = (body: string, type: string) =>
      client.request('/api/account/profile', {
        method: 'POST',
        headers: { 'content-type': type, 'x-csrf-token': csrfToken },
        body,
      });
    expect((await errorOf(await raw('{"name": ', 'application/json'))).status).toBe(400);
    expect((await errorOf(await raw('[1]', 'application/json'))).status).toBe(400);
    expect((await errorOf(await raw('name=x', 'text/plain'))).status).toBe(415);
    const huge = await raw(JSON.stringify({ name: 'x'.repeat(20_000) }), 'application/json');
    expect(huge.status).toBe(413);
    expect((await client.request('/api/account/profile', { method: 'PUT' })).status).toBe(405);
  });

  it.skipIf(skip)(
    'a sign-in counts as recent for REAUTH_MAX_AGE, and re-authentication renews it',
    async () => {
      // Recent until a time counted from the sign-in (and the re-authentication), checked
      // against when each began rather than the clock after it: a loaded machine may carry
      // that past a 2 s window.
      const signingIn = Date.now();
      const client = await signedIn(service, 'bob@example.com');
      const recentUntil = async () => {
        const body = (await (await client.get('/api/account')).json()) as { recentUntil: string };
        return Date.parse(body.recentUntil);
      };
      const first = await recentUntil();
      expect(first).toBeGreaterThanOrEqual(signingIn + reauthMaxAgeSeconds * 1000);
      expect(first).toBeLessThanOrEqual(Date.now() + reauthMaxAgeSeconds * 1000);
      await new Promise((resolve) => setTimeout(resolve, reauthMaxAgeSeconds * 1000 + 200));
      expect(await recentUntil()).toBeLessThan(Date.now());

      const wrong = await postJson(client, '/api/account/reauthenticate', { password: 'nope' });
      expect(await errorOf(wrong)).toEqual({ status: 403, code: 'invalid_credentials' });
      const cookieBefore = client.sessionCookie();
      const reauthenticating = Date.now();
      const right = await postJson(client, '/api/account/reauthenticate', { password });
      expect(right.status).toBe(200);
      expect(await right.json()).toEqual({ status: 'reauthenticated' });
      // Re-authentication creates no session: the cookie is the one held before.
      expect(right.headers.getSetCookie().some((c) => c.includes('session-token'))).toBe(false);
      expect(client.sessionCookie()).toBe(cookieBefore);
      expect(await recentUntil()).toBeGreaterThanOrEqual(
        reauthenticating + reauthMaxAgeSeconds * 1000,
      );
    },
  );

  it.skipIf(skip)('a password change ends every other session and this one goes on', async () => {
    const here = await signedIn(service, 'cy@example.com');
    const elsewhere = await signedIn(service, 'cy@example.com');
    const copied = here.sessionCookie() as string;

    const weak = await postJson(here, '/api/account/password/change', {
      currentPassword: password,
      newPassword: 'short',
    });
    expect(await errorOf(weak)).toEqual({ status: 422, code: 'weak_password' });
    const common = await postJson(here, '/api/account/password/change', {
      currentPassword: password,
      newPassword: 'password12345678',
    });
    expect(await errorOf(common)).toEqual({ status: 422, code: 'weak_password' });
    const wrong = await postJson(here, '/api/account/password/change', {
      currentPassword: 'not the password',
      newPassword,
    });
    expect(await errorOf(wrong)).toEqual({ status: 403, code: 'invalid_credentials' });
    expect(await sessionUser(elsewhere)).toBe('cy@example.com');

    const changed = await postJson(here, '/api/account/password/change', {
      currentPassword: password,
      newPassword,
    });
    expect(changed.status).toBe(200);
    expect(await changed.json()).toEqual({ status: 'password_changed', endedSessions: 1 });
    expect(await sessionUser(here)).toBe('cy@example.com');
    expect((await here.get('/api/account')).status).toBe(200);
    expect(await sessionUser(elsewhere)).toBeNull();
    // A copy of this browser's cookie taken before the change ends with the others.
    const copy = browser(service);
    copy.cookies.set('authjs.session-token', copied);
    expect(await sessionUser(copy)).toBeNull();

    const old = browser(service);
    const refused = await old.signIn('cy@example.com', password);
    expect(new URL(((await refused.json()) as { url: string }).url).searchParams.get('code')).toBe(
      'credentials',
    );
    await signedIn(service, 'cy@example.com', newPassword);
  });

  it.skipIf(skip)('wrong current passwords are throttled as sign-ins are', async () => {
    const client = await signedIn(service, 'dee@example.com');
    const attempt = () =>
      postJson(client, '/api/account/password/change', {
        currentPassword: 'a wrong password',
        newPassword,
      });
    for (let i = 0; i < 3; i += 1) {
      expect(await errorOf(await attempt())).toEqual({ status: 403, code: 'invalid_credentials' });
    }
    const throttled = await attempt();
    expect(throttled.headers.get('retry-after')).toMatch(/^\d+$/u);
    expect(await errorOf(throttled)).toEqual({ status: 429, code: 'rate_limited' });
    // The right password is refused too while the lock holds (nothing is hashed).
    const locked = await postJson(client, '/api/account/reauthenticate', { password });
    expect((await errorOf(locked)).status).toBe(429);
  });

  it.skipIf(skip)(
    'records sign-ins, failures, sign-outs and revocations, newest first',
    async () => {
      const stranger = browser(service);
      await stranger.signIn('eve@example.com', 'a wrong password');
      await stranger.signIn('nobody@example.com', 'a wrong password');
      const first = await signedIn(service, 'eve@example.com');
      // Each event is written after its answer, timed when written: a sign-out right behind the
      // sign-in could be written first (a loaded CI run on PostgreSQL did). A person is slower.
      await expect
        .poll(
          async () =>
            (
              (await (await first.get('/api/account/events')).json()) as {
                events: { type: string }[];
              }
            ).events[0]?.type,
          { timeout: 10_000 },
        )
        .toBe('signin');
      expect((await first.signOut()).status).toBe(200);
      const revoked = await service.cli(['users', 'revoke-sessions', '--email', 'eve@example.com']);
      expect(revoked.code).toBe(0);
      const client = await signedIn(service, 'eve@example.com');
      // Events are written once the answers are out: polled for, to a deadline (a loaded machine
      // may take seconds).
      let events: { type: string; at: string; ip: string; device: string }[] = [];
      for (const deadline = Date.now() + 20_000; Date.now() < deadline;) {
        const response = await client.get('/api/account/events');
        expect(response.status).toBe(200);
        events = ((await response.json()) as { events: typeof events }).events;
        if (events.length >= 5) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(events.map((event) => event.type)).toEqual([
        'signin',
        'session_revoked',
        'signout',
        'signin',
        'signin_failed',
      ]);
      const fromBrowser = events.filter((event) => event.type !== 'session_revoked');
      for (const event of fromBrowser) {
        expect(event).toEqual({
          type: event.type,
          at: event.at,
          ip: 'this computer (loopback)',
          device: userAgent,
        });
      }
      const times = events.map((event) => Date.parse(event.at));
      expect([...times].sort((a, b) => b - a)).toEqual(times);
    },
  );

  it.skipIf(skip)(
    "an operator's password, email and disable changes are in the user's record, marked as the operator's",
    async () => {
      await service.addUser('fay@example.com', password);
      const newPassword = 'an operator chose this passphrase';
      for (const args of [
        ['users', 'set-password', '--email', 'fay@example.com', '--password-stdin'],
        ['users', 'set-email', '--email', 'fay@example.com', '--new-email', 'fay2@example.com'],
        ['users', 'disable', '--email', 'fay2@example.com'],
        ['users', 'enable', '--email', 'fay2@example.com'],
      ]) {
        const result = await service.cli(args, `${newPassword}\n`);
        expect(result.code, result.stderr).toBe(0);
      }
      const client = await signedIn(service, 'fay2@example.com', newPassword);
      let events: { type: string; ip: string; device: string }[] = [];
      for (const deadline = Date.now() + 20_000; Date.now() < deadline;) {
        const response = await client.get('/api/account/events');
        events = ((await response.json()) as { events: typeof events }).events;
        if (events.length >= 4) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(events.map((event) => event.type)).toEqual([
        'signin',
        'session_revoked',
        'email_changed',
        'password_changed',
      ]);
      for (const event of events.slice(1)) {
        expect(event).toMatchObject({ ip: '', device: 'gatehouse CLI' });
      }
    },
  );
});
