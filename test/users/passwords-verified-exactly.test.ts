import { hash } from '@node-rs/argon2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../helpers/client.js';
import { addUser, startServer, type TestServer } from '../helpers/server.js';

const password = 'correct horse battery staple';

describe('passwords are verified exactly as set, and stored salted', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
    await addUser(server, 'ada@example.com', password, 'Ada');
  });
  afterAll(() => server.close());

  it('NFC and NFD spellings of a password and an email reach one account', async () => {
    const nfc = 'caf\u00e9 au lait, s\u2019il vous pla\u00eet';
    await addUser(server, 'ren\u00e9@example.com', nfc);
    const client = new Client(server.url);
    await client.signIn('rene\u0301@example.com', nfc.normalize('NFD'));
    expect(await client.session()).toMatchObject({ user: { email: 'ren\u00e9@example.com' } });
  });

  it('no truncation: a prefix or an extension of an 80-byte password fails', async () => {
    const long = 'x'.repeat(40) + 'y'.repeat(40);
    await addUser(server, 'long@example.com', long);
    for (const attempt of [long.slice(0, 72), `${long}x`]) {
      const client = new Client(server.url);
      await client.signIn('long@example.com', attempt);
      expect(await client.session()).toBeNull();
    }
    const client = new Client(server.url);
    await client.signIn('long@example.com', long);
    expect(await client.session()).not.toBeNull();
  });

  it.each([
    ['64 code points', 'p'.repeat(64)],
    ['128 code points with emoji and spaces', `${'🔑 '.repeat(40)}${'q'.repeat(48)}`],
    ['leading and trailing spaces kept', '  spaced out password  '],
  ])('a password of %s is verified exactly', async (_name, pw) => {
    const email = `len${pw.length}@example.com`;
    await addUser(server, email, pw);
    const exact = new Client(server.url);
    await exact.signIn(email, pw);
    expect(await exact.session()).not.toBeNull();
    const trimmed = new Client(server.url);
    await trimmed.signIn(email, pw.trim() === pw ? `${pw} ` : pw.trim());
    expect(await trimmed.session()).toBeNull();
  });

  it('a weaker stored hash is upgraded to argon2id m=19456,t=2,p=1 on the next sign-in', async () => {
    const weak = await hash(password, {
      algorithm: 2,
      memoryCost: 4096,
      timeCost: 1,
      parallelism: 1,
    });
    const user = await server.services.users.create({
      email: 'old@example.com',
      name: 'Old',
      passwordHash: weak,
    });
    const client = new Client(server.url);
    await client.signIn('old@example.com', password);
    expect(await client.session()).not.toBeNull();
    const stored = await server.services.users.findById(user!.id);
    expect(stored?.passwordHash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    // The upgrade keeps the session it was made in.
    expect(await client.session()).not.toBeNull();
  });

  it('the same password for two users gives two different salted hashes', async () => {
    const a = await server.services.users.findByEmail('ada@example.com');
    await addUser(server, 'twin@example.com', password);
    const b = await server.services.users.findByEmail('twin@example.com');
    expect(a?.passwordHash).not.toBe(b?.passwordHash);
  });
});
