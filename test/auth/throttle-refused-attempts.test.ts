import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../helpers/client.js';
import { createTestDatabase, hasPostgres, type TestDatabase } from '../helpers/postgres.js';
import { addUser, countVerifications, startServer, type TestServer } from '../helpers/server.js';

const password = 'correct horse battery staple';
const ipMaxFailures = 3;
const emailMaxFailures = 5;

/** One sign-in from `address` (through the trusted proxy) with these fields, as posted. */
async function attempt(
  server: TestServer,
  address: string,
  fields: Record<string, string>,
): Promise<{ status: number; code: string; retryAfter: string | null }> {
  const client = new Client(server.url, { 'x-forwarded-for': address });
  const csrfToken = await client.csrfToken();
  const response = await client.postForm(
    '/api/auth/callback/credentials',
    { csrfToken, ...fields },
    { 'x-auth-return-redirect': '1' },
  );
  const { url } = (await response.json()) as { url: string };
  return {
    status: response.status,
    code: new URL(url).searchParams.get('code') ?? 'ok',
    retryAfter: response.headers.get('retry-after'),
  };
}

// Each refusal is made before any NFKC, database or hashing work of its own; the charge is what
// keeps a client sending nothing else from running without limit.
// `email` is a readable address of the case's own: each case starts with its email's count at 0.
const refusals: [string, (n: number, email: string) => Record<string, string>][] = [
  [
    'a password longer than 4 × 1,024 units',
    (_n, email) => ({ email, password: 'p'.repeat(4097) }),
  ],
  [
    'a password of 31 combining marks in a row',
    (_n, email) => ({ email, password: `a${'\u0301\u0323'.repeat(15)}\u0301` }),
  ],
  [
    'a password of 2,047 alternating marks (the reordering worst case)',
    (_n, email) => ({ email, password: `a${'\u0301\u0323'.repeat(1023)}\u0301` }),
  ],
  [
    'half-width kana sound marks, which NFKC makes combining',
    (_n, email) => ({ email, password: `a${'\uff9e'.repeat(31)}` }),
  ],
  [
    'a password of 1,025 code points after NFKC',
    (_n, email) => ({ email, password: '\ufb01'.repeat(513) }),
  ],
  [
    'an email longer than 4 × 254 units, each time another',
    (n) => ({ email: `${n}${'a'.repeat(1017)}@example.com`, password }),
  ],
  [
    'an email of 31 combining marks in a row',
    (n) => ({ email: `a${'\u0308'.repeat(31)}${n}@example.com`, password }),
  ],
  ['no @ in the email, each time another', (n) => ({ email: `nobody-${n}`, password })],
  ['a missing password', (_n, email) => ({ email })],
  ['a missing email', () => ({ password })],
];

describe.each([
  ['SQLite', false],
  ['PostgreSQL', true],
] as const)(
  'sign-ins refused before their password check are charged to the throttle (%s)',
  (_, postgres) => {
    let server: TestServer;
    let database: TestDatabase | undefined;
    const counter = countVerifications();
    const skip = postgres && !hasPostgres;
    beforeAll(async () => {
      if (skip) return;
      if (postgres) database = await createTestDatabase();
      server = await startServer({
        ...(database && { databaseUrl: database.url }),
        config: { trustProxy: ['127.0.0.1'] },
        throttle: {
          ipMaxFailures,
          emailMaxFailures,
          ipMaxAttempts: 1000,
          emailMaxAttempts: 1000,
          windowSeconds: 900,
          lockSeconds: 900,
        },
        wrap: counter.wrap,
      });
      await addUser(server, 'ada@example.com', password);
    });
    afterAll(async () => {
      await server?.close();
      await database?.drop();
    });

    it.skipIf(skip).each(refusals.map(([name, fields], i) => [name, fields, i + 1] as const))(
      'a client sending only %s gets 429 past the address limit, and its right password too',
      async (_name, fields, i) => {
        const address = `192.0.2.${i}`;
        const answers = [];
        for (let n = 0; n <= ipMaxFailures; n += 1) {
          answers.push(await attempt(server, address, fields(n, `case-${i}@example.com`)));
        }
        expect(answers.map(({ status, code }) => `${status} ${code}`)).toEqual([
          ...Array.from({ length: ipMaxFailures }, () => '200 credentials'),
          '429 rate_limited',
        ]);
        expect(answers.at(-1)?.retryAfter).toBe('900');
        // Throttled as a client guessing passwords is: the right one is not checked either.
        const before = counter.count();
        const right = await attempt(server, address, { email: 'ada@example.com', password });
        expect(`${right.status} ${right.code}`).toBe('429 rate_limited');
        expect(counter.count()).toBe(before);
      },
    );

    it.skipIf(skip)(
      'refusals naming a readable email are charged to that email too, from any address',
      async () => {
        const victim = 'grace@example.com';
        await addUser(server, victim, password);
        const codes = [];
        // One refusal from each of 6 addresses, none of them past its own limit.
        for (let n = 0; n <= emailMaxFailures; n += 1) {
          const answer = await attempt(server, `198.51.100.${n + 1}`, {
            email: victim,
            password: 'x'.repeat(4097),
          });
          codes.push(answer.code);
        }
        expect(codes).toEqual([
          ...Array.from({ length: emailMaxFailures }, () => 'credentials'),
          'rate_limited',
        ]);
      },
    );

    it.skipIf(skip)('an over-long refusal costs no hash', async () => {
      const before = counter.count();
      await attempt(server, '203.0.113.1', {
        email: 'ada@example.com',
        password: 'p'.repeat(4097),
      });
      expect(counter.count()).toBe(before);
    });
  },
);
