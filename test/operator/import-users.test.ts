import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  serviceDatabase,
  startAccountService,
  type AccountService,
} from '../account/account-service.js';
import { Client } from '../helpers/client.js';
import { hasPostgres } from '../helpers/postgres.js';
import { openDatabase } from '../../src/db/open.js';
import { signInWithSoftPasskey, softPasskey } from '../helpers/soft-passkey.js';

const testRequire = createRequire(new URL('../package.json', import.meta.url));
const bcryptjs = testRequire('bcryptjs') as { hashSync(password: string, cost: number): string };

const password = 'an old password from the old app';
const djangoSalt = 'c2FsdHlzYWx0';
const django = `pbkdf2_sha256$600000$${djangoSalt}$${crypto
  .pbkdf2Sync(password, djangoSalt, 600_000, 32, 'sha256')
  .toString('base64')}`;
// A passkey the old app registered: its key pair stays on the person's device.
const oldKey = softPasskey();
const passkey = {
  credentialId: oldKey.id,
  publicKey: oldKey.publicKey,
  counter: 7,
  transports: ['internal', 'hybrid'],
};

const users = [
  {
    id: 'clx0ada0000001',
    email: 'Ada@Example.com',
    name: 'Ada',
    emailVerified: '2024-03-01T10:00:00.000Z',
    passwordHash: bcryptjs.hashSync(password, 10),
    createdAt: '2023-01-01T00:00:00.000Z',
    image: 'https://example.com/ada.png',
  },
  { id: 'clx0bob0000002', email: 'bob@example.com', name: null, passwordHash: django },
  {
    id: 42,
    email: 'cy@example.com',
    passwordHash: null,
    identities: [{ provider: 'github', subject: 1234567 }],
    passkeys: [passkey],
  },
];
const jsonl = (lines: unknown[]) => lines.map((line) => JSON.stringify(line)).join('\n') + '\n';

for (const backend of ['sqlite', 'postgres'] as const) {
  describe.skipIf(backend === 'postgres' && !hasPostgres)(`users import (${backend})`, () => {
    let service: AccountService;
    let dispose: () => Promise<void>;
    let dir: string;
    let storeUrl: string;
    const storedHash = async (email: string) => {
      const { db } = openDatabase(storeUrl);
      try {
        const row = await db
          .selectFrom('users')
          .select('password_hash')
          .where('email', '=', email)
          .executeTakeFirstOrThrow();
        return row.password_hash;
      } finally {
        await db.destroy();
      }
    };
    const file = (name: string, lines: unknown[]) => {
      const at = path.join(dir, name);
      fs.writeFileSync(at, jsonl(lines));
      return at;
    };
    const listed = async () =>
      JSON.parse((await service.cli(['users', 'list', '--json'])).stdout) as Array<{
        id: string;
        email: string;
        emailVerified: boolean;
      }>;

    beforeAll(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-import-'));
      const database = await serviceDatabase(backend);
      dispose = database.dispose;
      const providers = { AUTH_GITHUB_ID: 'gh-client', AUTH_GITHUB_SECRET: 'gh-secret' };
      // The CLI reads the providers as the service does (an identity's issuer is its provider's).
      service = await startAccountService({ ...database.env, ...providers });
      storeUrl =
        database.env.DATABASE_URL ??
        `file:${path.join(database.env.DATA_DIR ?? '', 'gatehouse.db')}`;
    });
    afterAll(async () => {
      await service.stop();
      await dispose();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('a bad file is named by line and field, and nothing of it is written', async () => {
      const bad = file('bad.jsonl', [
        users[0],
        {
          ...users[1],
          passwordHash: '$2b$14$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy',
        },
        { id: 'x1', email: 'ADA@example.com' },
        { id: 'x2', email: 'not an address' },
        { id: 'x3', email: 'x3@example.com', passwrdHash: 'typo' },
        { id: 'x4', email: 'x4@example.com', passwordHash: '$1$saltsalt$qjXMvbEw8oaL.CzflDugX/' },
        { id: 'x5', email: 'x5@example.com', identities: [{ provider: 'google', subject: '1' }] },
        'not an object',
      ]);
      const result = await service.cli(['users', 'import', bad]);
      expect(result.code).toBe(1);
      expect(result.stdout).toContain('line 2: passwordHash bcrypt cost 14 is over 13');
      expect(result.stdout).toContain('line 3: email ada@example.com is on line 1 too');
      expect(result.stdout).toContain('line 4: email must be an email address');
      expect(result.stdout).toContain('line 5: passwrdHash is not a field of an import line');
      expect(result.stdout).toContain('line 6: passwordHash an unknown hash format');
      expect(result.stdout).toContain(
        'line 7: identities.0.provider names google, which is not configured',
      );
      expect(result.stdout).toContain('line 8: (line) must be a JSON object');
      expect(result.stderr).toContain('nothing was written');
      expect(await listed()).toEqual([]);
    });

    it('a line repeating one of an earlier batch is found too (the store remembers, not the process)', async () => {
      const many = Array.from({ length: 600 }, (_, i) => ({
        id: `many-${i}`,
        email: `many-${i}@example.com`,
      }));
      many.push({ id: 'many-last', email: 'many-3@example.com' });
      const result = await service.cli(['users', 'import', '--check', file('many.jsonl', many)]);
      expect(result.code).toBe(1);
      expect(result.stdout).toContain(
        'line 601: email many-3@example.com is on an earlier line too',
      );
      expect(await listed()).toEqual([]);
    });

    it('--check reports what would be imported and writes nothing', async () => {
      const result = await service.cli(['users', 'import', '--check', file('check.jsonl', users)]);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(
        '3 users to add (password hashes: 1 bcrypt, 1 django-pbkdf2-sha256, 1 none)',
      );
      expect(result.stdout).toContain('1 identities, 1 passkeys');
      expect(await listed()).toEqual([]);
    });

    it('imports with ids kept; a second run of the same file changes nothing', async () => {
      // Saved by an editor that puts a byte-order mark first and ends lines the Windows way.
      const first = await service.cli(
        ['users', 'import', '-'],
        `\uFEFF${jsonl(users).replace(/\n/g, '\r\n')}`,
      );
      expect(first.code).toBe(0);
      expect(first.stdout).toContain('3 users added');
      const rows = await listed();
      expect(rows.map((row) => [row.id, row.email, row.emailVerified]).sort()).toEqual([
        ['42', 'cy@example.com', false],
        ['clx0ada0000001', 'ada@example.com', true],
        ['clx0bob0000002', 'bob@example.com', false],
      ]);
      const again = await service.cli(['users', 'import', file('again.jsonl', users)]);
      expect(again.code).toBe(0);
      expect(again.stdout).toContain('0 users added');
      expect(again.stdout).toContain('3 users already here, left as they are');
      expect(await listed()).toHaveLength(3);
      const identities = await service.cli([
        'users',
        'identities',
        '--email',
        'cy@example.com',
        '--json',
      ]);
      expect(JSON.parse(identities.stdout)).toMatchObject([{ provider: 'github' }]);
    });

    it('an id or address that belongs to someone else here is refused, naming the line', async () => {
      const result = await service.cli([
        'users',
        'import',
        file('taken.jsonl', [
          { id: 'new-1', email: 'new-1@example.com' },
          { id: 'clx0ada0000001', email: 'someone-else@example.com' },
          { id: 'new-2', email: 'bob@example.com' },
          { id: 'new-3', email: 'new-3@example.com', passkeys: [passkey] },
          {
            id: 'new-4',
            email: 'new-4@example.com',
            identities: [{ provider: 'github', subject: '1234567' }],
          },
        ]),
      ]);
      expect(result.code).toBe(1);
      expect(result.stdout).toContain('line 2: id belongs to another user here (ada@example.com)');
      expect(result.stdout).toContain(
        'line 3: email belongs to another user here (id clx0bob0000002)',
      );
      expect(result.stdout).toContain(
        'line 4: passkeys.0.credentialId belongs to another user here',
      );
      expect(result.stdout).toContain('line 5: identities.0 is linked to another user here');
      expect((await listed()).map((row) => row.email)).not.toContain('new-1@example.com');
    });

    it('an old bcrypt or Django hash signs in, then is argon2id; a wrong password does not', async () => {
      for (const email of ['ada@example.com', 'bob@example.com']) {
        const wrong = new Client(service.url);
        expect(
          (await (await wrong.signIn(email, `${password}?`)).json()) as { url: string },
        ).toMatchObject({
          url: expect.stringContaining('error=CredentialsSignin'),
        });
        expect(await storedHash(email)).not.toMatch(/^\$argon2id\$/);
        const client = new Client(service.url);
        const signedIn = await client.signIn(email, password);
        expect(signedIn.status).toBe(200);
        expect(((await client.session()) as { user: { email: string } }).user.email).toBe(email);
        expect(await storedHash(email)).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
        // The next sign-in verifies the argon2id hash the first one left.
        const again = new Client(service.url);
        expect((await again.signIn(email, password)).status).toBe(200);
        expect(((await again.session()) as { user: { id: string } }).user.id).toMatch(/^clx0/);
      }
    });

    it('an imported passkey signs in as it did in the old app', async () => {
      const client = new Client(service.url);
      const answer = await signInWithSoftPasskey(client, oldKey, 8);
      expect(answer.status).toBe(200);
      expect(((await client.session()) as { user: { id: string } }).user.id).toBe('42');
    });
  });
}
