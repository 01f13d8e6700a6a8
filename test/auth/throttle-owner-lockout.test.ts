import { afterEach, describe, expect, it } from 'vitest';
import { issue } from '../../src/account/model/secrets.js';
import { enableUser } from '../../src/operator/operations.js';
import type { AppDeps } from '../../src/app.js';
import { capturedMail } from '../helpers/captured-mail.js';
import { Client } from '../helpers/client.js';
import { createTestDatabase, hasPostgres } from '../helpers/postgres.js';
import { addUser, fakeClock, startServer, type TestServer } from '../helpers/server.js';

const password = 'correct horse battery staple';
const wrong = 'this is not the password';
const attacker = '203.0.113.9';
const home = '198.51.100.7';
const elsewhere = '198.51.100.8';
const device = 'gatehouse.device';

async function code(response: Response): Promise<string> {
  const { url } = (await response.json()) as { url: string };
  return new URL(url).searchParams.get('code') ?? 'ok';
}

/** A browser at `address` (through the trusted proxy), holding `deviceCookie` if given. */
function browser(server: TestServer, address: string, deviceCookie?: string): Client {
  const client = new Client(server.url, { 'x-forwarded-for': address });
  if (deviceCookie !== undefined) client.cookies.set(device, deviceCookie);
  return client;
}

/** The device cookie a successful sign-in at `address` leaves in the browser. */
async function signedInBefore(server: TestServer, address: string, email = 'ada@example.com') {
  const client = browser(server, address);
  expect(await code(await client.signIn(email, password))).toBe('ok');
  const cookie = client.cookies.get(device);
  expect(cookie).toBeDefined();
  return cookie as string;
}

async function lockFrom(server: TestServer, address: string, deviceCookie?: string) {
  const client = browser(server, address, deviceCookie);
  for (let i = 0; i < 10; i += 1) {
    expect(await code(await client.signIn('ada@example.com', wrong))).toBe('credentials');
  }
}

describe('guesses from elsewhere do not lock an account’s owner out', () => {
  let current: TestServer | undefined;
  afterEach(async () => {
    await current?.close();
    current = undefined;
  });

  async function start(config: { authUrl?: string } = {}, wrap?: (deps: AppDeps) => AppDeps) {
    const clock = fakeClock();
    current = await startServer({
      now: clock.now,
      config: { trustProxy: ['127.0.0.1'], ...config },
      ...(wrap !== undefined && { wrap }),
    });
    await addUser(current, 'ada@example.com', password);
    await addUser(current, 'bob@example.com', password);
    return { server: current, clock };
  }

  it('a sign-in sets a long-lived HttpOnly, SameSite=Lax device cookie; a failed one sets none', async () => {
    const { server } = await start();
    const failed = await browser(server, home).signIn('ada@example.com', wrong);
    expect(failed.headers.getSetCookie().some((c) => c.startsWith(`${device}=`))).toBe(false);
    const response = await browser(server, home).signIn('ada@example.com', password);
    const line = response.headers.getSetCookie().find((c) => c.startsWith(`${device}=`));
    expect(line).toMatch(
      /^gatehouse\.device=\d+\.\d+\.[\w-]{22}\.[\w-]{43}; Path=\/; Max-Age=31536000; HttpOnly; SameSite=Lax$/,
    );
    // The account is not named in it.
    expect(line).not.toContain('ada');
  });

  it('a plain form post that signs in gets the device cookie with its 302', async () => {
    const { server } = await start();
    const client = browser(server, home);
    const csrfToken = await client.csrfToken();
    const response = await client.postForm('/api/auth/callback/credentials', {
      csrfToken,
      email: 'ada@example.com',
      password,
    });
    expect(response.status).toBe(302);
    expect(client.cookies.get(device)).toMatch(/^\d+\.\d+\.[\w-]{22}\.[\w-]{43}$/);
  });

  it('over https the device cookie is __Host- prefixed and Secure', async () => {
    const { server } = await start({ authUrl: 'https://auth.example.com' });
    const response = await browser(server, home).signIn('ada@example.com', password);
    const line = response.headers.getSetCookie().find((c) => c.includes('gatehouse.device='));
    expect(line).toMatch(
      /^__Host-gatehouse\.device=\d+\.\d+\.[\w-]{22}\.[\w-]{43}; Path=\/; Max-Age=31536000; HttpOnly; SameSite=Lax; Secure$/,
    );
    expect(line).not.toMatch(/Domain=/i);
  });

  it('one address locks the email; the owner elsewhere with a device cookie still signs in, without it is refused', async () => {
    const { server } = await start();
    const known = await signedInBefore(server, home);
    await lockFrom(server, attacker);

    const stranger = await browser(server, elsewhere).signIn('ada@example.com', password);
    expect(stranger.status).toBe(429);
    expect(Number(stranger.headers.get('retry-after'))).toBeGreaterThan(0);

    const owner = browser(server, home, known);
    const response = await owner.signIn('ada@example.com', password);
    expect(response.status).toBe(200);
    expect(await code(response)).toBe('ok');
    expect(await owner.session()).toMatchObject({ user: { email: 'ada@example.com' } });

    // The owner's sign-in past the lock does not lift it for anyone else.
    expect((await browser(server, elsewhere).signIn('ada@example.com', password)).status).toBe(429);
  });

  it('the attacker’s own address stays locked out of that email, even with the right password', async () => {
    const { server } = await start();
    await lockFrom(server, attacker);
    const again = await browser(server, attacker).signIn('ada@example.com', password);
    expect(again.status).toBe(429);
    // Other accounts from that address are not locked by it.
    expect(await code(await browser(server, attacker).signIn('bob@example.com', password))).toBe(
      'ok',
    );
  });

  it('a device cookie does not pass the lock of the address its failures came from', async () => {
    const { server } = await start();
    const known = await signedInBefore(server, home);
    // Wrong passwords with the cookie still count: this address locks itself out of the email.
    await lockFrom(server, home, known);
    expect((await browser(server, home, known).signIn('ada@example.com', password)).status).toBe(
      429,
    );
    // From another address the same device still gets in.
    expect(
      await code(await browser(server, elsewhere, known).signIn('ada@example.com', password)),
    ).toBe('ok');
  });

  it.each([
    ['a forged value', () => `${Math.floor(Date.now() / 1000)}.${'A'.repeat(43)}`],
    ['garbage', () => 'not-a-device-cookie'],
    ['an empty value', () => ''],
  ])('%s does not pass the per-email lock', async (_name, value) => {
    const { server } = await start();
    await lockFrom(server, attacker);
    expect((await browser(server, home, value()).signIn('ada@example.com', password)).status).toBe(
      429,
    );
  });

  it('a device cookie issued for another email does not pass its lock', async () => {
    const { server } = await start();
    const bobs = await signedInBefore(server, home, 'bob@example.com');
    await lockFrom(server, attacker);
    expect((await browser(server, home, bobs).signIn('ada@example.com', password)).status).toBe(
      429,
    );
  });

  it('a device cookie older than a year no longer passes', async () => {
    const { server, clock } = await start();
    const known = await signedInBefore(server, home);
    clock.advance(366 * 24 * 3600 * 1000);
    await lockFrom(server, attacker);
    expect((await browser(server, home, known).signIn('ada@example.com', password)).status).toBe(
      429,
    );
  });

  /** A signed-in account route, posted as JSON with the client's CSRF pair. */
  async function postAccount(client: Client, path: string, body: Record<string, unknown>) {
    const csrfToken = await client.csrfToken();
    return client.request(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ csrfToken, ...body }),
    });
  }

  it('a credential change ends the trust earlier sign-ins earned: the old device cookie no longer passes', async () => {
    const { server } = await start();
    const known = await signedInBefore(server, elsewhere);
    const owner = browser(server, home);
    expect(await code(await owner.signIn('ada@example.com', password))).toBe('ok');
    const changed = await postAccount(owner, '/api/account/password/change', {
      currentPassword: password,
      newPassword: 'a new and longer passphrase',
    });
    expect(changed.status).toBe(200);
    await lockFrom(server, attacker);
    // The cookie an intruder kept from before the change: refused like any stranger.
    const kept = browser(server, elsewhere, known);
    expect((await kept.signIn('ada@example.com', 'a new and longer passphrase')).status).toBe(429);
  });

  it("a lock (\"this wasn't me\") ends that trust too: re-enabled by the operator, the account's lock still stops the intruder's old device cookie", async () => {
    const { queue } = capturedMail();
    const { server, clock } = await start({}, (deps) => ({ ...deps, mail: queue }));
    // The intruder signed in once, and kept the device cookie (and the password).
    const kept = await signedInBefore(server, elsewhere);
    const ada = await server.services.users.findByEmail('ada@example.com');
    if (ada === null) throw new Error('no ada');
    const { token } = await issue(
      server.db,
      {
        purpose: 'lock',
        userId: ada.id,
        email: ada.email,
        credentialVersion: ada.credentialVersion,
        ttlSeconds: 3600,
        withCode: false,
      },
      clock.now(),
    );
    expect((await postAccount(browser(server, home), '/api/account/lock', { token })).status).toBe(
      200,
    );
    const ports = { db: server.db, now: clock.now, throttle: server.services.throttle };
    expect(await enableUser(ports, { userId: ada.id, actor: { label: 'test' } })).toMatchObject({
      disabled: false,
    });
    await lockFrom(server, attacker);
    // Refused like any stranger's browser, though the password is right.
    expect(
      (await browser(server, elsewhere, kept).signIn('ada@example.com', password)).status,
    ).toBe(429);
  });

  it('a session is not a device: re-authentication past a per-email lock needs the device cookie', async () => {
    const { server } = await start();
    const owner = browser(server, home);
    expect(await code(await owner.signIn('ada@example.com', password))).toBe('ok');
    const withoutDevice = browser(server, elsewhere);
    expect(await code(await withoutDevice.signIn('ada@example.com', password))).toBe('ok');
    withoutDevice.cookies.delete(device);
    await lockFrom(server, attacker);
    const reauth = (client: Client) =>
      postAccount(client, '/api/account/reauthenticate', { password });
    expect((await reauth(withoutDevice)).status).toBe(429);
    expect((await reauth(owner)).status).toBe(200);
  });

  it('an admin unlock lifts the per-address locks of the email too', async () => {
    const { server } = await start();
    await lockFrom(server, attacker);
    await server.services.throttle.unlockEmail('ada@example.com');
    expect(await code(await browser(server, attacker).signIn('ada@example.com', password))).toBe(
      'ok',
    );
  });
});

describe.each([
  ['SQLite', false],
  ['PostgreSQL', true],
] as const)('on %s, the (email, address) counters', (_, postgres) => {
  it.skipIf(postgres && !hasPostgres)(
    'lock the attacker’s address, not the owner’s, and an admin unlock clears them all',
    async () => {
      const database = postgres ? await createTestDatabase() : undefined;
      const server = await startServer({
        databaseUrl: database?.url,
        config: { trustProxy: ['127.0.0.1'] },
      });
      try {
        await addUser(server, 'ada@example.com', password);
        const known = await signedInBefore(server, home);
        await lockFrom(server, attacker);
        expect((await browser(server, attacker).signIn('ada@example.com', password)).status).toBe(
          429,
        );
        expect(
          await code(await browser(server, home, known).signIn('ada@example.com', password)),
        ).toBe('ok');
        await server.services.throttle.unlockEmail('ada@example.com');
        for (const address of [attacker, elsewhere]) {
          expect(
            await code(await browser(server, address).signIn('ada@example.com', password)),
          ).toBe('ok');
        }
      } finally {
        await server.close();
        await database?.drop();
      }
    },
  );
});
