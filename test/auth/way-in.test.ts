import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WayIn } from '../../src/auth/way-in.js';
import { Client } from '../helpers/client.js';
import { createTestDatabase, hasPostgres, type TestDatabase } from '../helpers/postgres.js';
import { addUser, startServer, type TestServer } from '../helpers/server.js';

/*
 * A way in is a module: the Auth.js wing mounts whatever is registered (src/auth/way-in.ts) and
 * names none. A way in of the test's own, unknown to the wing, gets its routes, its provider
 * entry, its check after the password with the sign-in challenge its refusal opens, and a
 * sign-in of its own through Auth.js's credentials callback, exactly as the house's do.
 */

const password = 'correct horse battery staple';

/** A way in the wing has never heard of: a spoken word, after or instead of the password. */
function exampleWayIn(server: () => TestServer): WayIn {
  return {
    id: 'example',
    challengeOpenedBy: { example_word_required: 'example_word' },
    signInChecks: [
      {
        name: 'example',
        check: async (_user, attempt) =>
          attempt.credentials.word === 'please'
            ? { ok: true, proof: 'example_word' }
            : { ok: false, code: 'example_word_required' },
      },
    ],
    providers: (authUrl) => ({
      example: { id: 'example', name: 'Example', callbackUrl: `${authUrl}/callback/example` },
    }),
    routes: [
      {
        action: 'example/options',
        methods: ['GET'],
        handler: (_request, reply) => reply.code(200).send({ word: 'please' }),
      },
      {
        action: 'callback/example',
        methods: ['POST'],
        signsIn: true,
        handler(request, reply, kit) {
          const body = kit.guardPost(request);
          const email = new URLSearchParams(body.toString('utf8')).get('email') ?? '';
          return kit.signIn(request, reply, body, {
            async authorize(credentials, context) {
              const user = await server().services.users.findByEmail(email);
              if (user === null || credentials.word !== 'please') {
                context.signInResult = 'invalid';
                return null;
              }
              context.signInResult = 'success';
              context.verifiedCredential = {
                userId: user.id,
                credentialVersion: user.credentialVersion,
                proofs: ['example_word'],
              };
              return { id: user.id, email: user.email, name: user.name };
            },
            cookies: ['example.spent=1; Path=/api/auth; HttpOnly'],
            detail: { method: 'example' },
          });
        },
      },
    ],
  };
}

describe.each([
  ['SQLite', false],
  ['PostgreSQL', true],
] as const)('a way in the wing does not know, on %s', (_, postgres) => {
  const skip = postgres && !hasPostgres;
  let database: TestDatabase | undefined;
  let server: TestServer;
  let userId: string;

  beforeAll(async () => {
    if (skip) return;
    if (postgres) database = await createTestDatabase();
    server = await startServer({
      databaseUrl: database?.url,
      wrap: (deps) => ({ ...deps, waysIn: [exampleWayIn(() => server)] }),
    });
    userId = await addUser(server, 'ada@example.com', password, 'Ada');
  });
  afterAll(async () => {
    if (skip) return;
    await server.close();
    await database?.drop();
  });

  it.skipIf(skip)('is listed after Auth.js’s providers and its route answers', async () => {
    const client = new Client(server.url);
    const providers = (await (await client.get('/api/auth/providers')).json()) as object;
    expect(Object.keys(providers).at(-1)).toBe('example');
    expect(providers).toMatchObject({
      credentials: { id: 'credentials' },
      example: { callbackUrl: `${server.url}/api/auth/callback/example` },
    });
    const options = await client.get('/api/auth/example/options');
    expect(options.status).toBe(200);
    expect(await options.json()).toEqual({ word: 'please' });
    const post = await client.postForm('/api/auth/example/options', {});
    expect(post.status).toBe(405);
  });

  it.skipIf(skip)(
    'its check after the password opens the sign-in challenge, and the next post needs only its word',
    async () => {
      const client = new Client(server.url);
      const first = await client.signIn('ada@example.com', password);
      const { url } = (await first.json()) as { url: string };
      expect(new URL(url).searchParams.get('code')).toBe('example_word_required');
      expect(client.cookies.get('gatehouse.second-step')).toMatch(/^[\w-]{43}$/);
      expect(await client.session()).toBeNull();
      const csrfToken = await client.csrfToken();
      const second = await client.postForm(
        '/api/auth/callback/credentials',
        { csrfToken, word: 'please' },
        { 'x-auth-return-redirect': '1' },
      );
      expect(second.status).toBe(200);
      expect(client.cookies.get('gatehouse.second-step') ?? '').toBe('');
      expect(await client.session()).toMatchObject({ user: { email: 'ada@example.com' } });
    },
  );

  it.skipIf(skip)(
    'its own route signs in through the credentials callback: the session, its cookie, its record',
    async () => {
      const client = new Client(server.url);
      const csrfToken = await client.csrfToken();
      const wrong = await client.postForm(
        '/api/auth/callback/example',
        { csrfToken, email: 'ada@example.com', word: 'nope' },
        { 'x-auth-return-redirect': '1' },
      );
      expect(wrong.headers.getSetCookie()).toContain('example.spent=1; Path=/api/auth; HttpOnly');
      expect(await client.session()).toBeNull();
      const right = await client.postForm(
        '/api/auth/callback/example',
        { csrfToken, email: 'ada@example.com', word: 'please' },
        { 'x-auth-return-redirect': '1' },
      );
      expect(right.status).toBe(200);
      expect(await right.json()).toEqual({ url: server.url });
      expect(right.headers.getSetCookie()).toContain('example.spent=1; Path=/api/auth; HttpOnly');
      expect(await client.session()).toMatchObject({ user: { email: 'ada@example.com' } });
      await expect
        .poll(
          async () =>
            (
              await server.db
                .selectFrom('account_events')
                .select('detail')
                .where('user_id', '=', userId)
                .where('type', '=', 'signin')
                .execute()
            ).map((event) => event.detail),
          // Written after the answer: a loaded machine may take longer than the 1 s default.
          { timeout: 20_000 },
        )
        .toContain(JSON.stringify({ method: 'example' }));
    },
  );
});

describe('the Auth.js wing', () => {
  it('names no particular way in anywhere in its files', () => {
    const root = path.resolve(import.meta.dirname, '../../src/auth');
    const named = /totp|passkey|webauthn|enrol|recoverycode|recovery_code|second_step|secondstep/i;
    const files = fs.readdirSync(root, { recursive: true, encoding: 'utf8' });
    const naming = files
      .filter((file) => file.endsWith('.ts'))
      .filter((file) => named.test(fs.readFileSync(path.join(root, file), 'utf8')));
    expect(naming).toEqual([]);
  });
});
