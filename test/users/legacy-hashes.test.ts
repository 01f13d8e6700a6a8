import crypto from 'node:crypto';
import { createRequire } from 'node:module';
import { hashSync as argon2Hash } from '@node-rs/argon2';
import { describe, expect, it } from 'vitest';
import { readHash, verifyHash } from '../../src/users/legacy-hashes.cjs';

// Each format's vectors are made by an implementation other than the one that verifies them:
// bcryptjs (JavaScript) against @node-rs/bcrypt, firebase-scrypt's own code, and node:crypto
// written out as each format's documentation says.
const testRequire = createRequire(new URL('../package.json', import.meta.url));
const bcryptjs = testRequire('bcryptjs') as { hashSync(password: string, cost: number): string };
const { FirebaseScrypt } = testRequire('firebase-scrypt') as {
  FirebaseScrypt: new (params: object) => { hash(password: string, salt: string): Promise<string> };
};

const password = 'correct horse battery staple';
const b64 = (bytes: Buffer) => bytes.toString('base64').replace(/=+$/, '');
const ab64 = (bytes: Buffer) => b64(bytes).replace(/\+/g, '.');
const salt = crypto.randomBytes(16);

const firebase = {
  signerKey: crypto.randomBytes(64).toString('base64'),
  saltSeparator: 'Bw==',
  rounds: 8,
  memCost: 14,
};

async function vectors(): Promise<Array<[string, string]>> {
  const bcrypt = bcryptjs.hashSync(password, 10);
  const scrypt = crypto.scryptSync(password, salt, 32, { N: 2 ** 14, r: 8, p: 1 });
  const betterAuthSalt = crypto.randomBytes(16).toString('hex');
  const betterAuthKey = crypto.scryptSync(password.normalize('NFKC'), betterAuthSalt, 64, {
    N: 16384,
    r: 16,
    p: 1,
    maxmem: 64 * 1024 * 1024,
  });
  const pbkdf2 = crypto.pbkdf2Sync(password, salt, 600_000, 32, 'sha256');
  const djangoSalt = 'hT0TJyxd8vJ3sY1k5w0xAb';
  const django = crypto.pbkdf2Sync(password, djangoSalt, 870_000, 32, 'sha256');
  const firebaseSalt = crypto.randomBytes(16).toString('base64');
  const firebaseHash = await new FirebaseScrypt(firebase).hash(password, firebaseSalt);
  return [
    ['bcrypt $2a$ (bcryptjs)', bcrypt.replace(/^\$2b\$/, '$2a$')],
    ['bcrypt $2b$ (bcryptjs)', bcrypt.replace(/^\$2a\$/, '$2b$')],
    ['bcrypt $2y$ (PHP names the same hash so)', bcrypt.replace(/^\$2[ab]\$/, '$2y$')],
    ['argon2id', argon2Hash(password, { algorithm: 2, memoryCost: 19456, timeCost: 2 })],
    ['argon2i', argon2Hash(password, { algorithm: 1, memoryCost: 4096, timeCost: 3 })],
    ['scrypt PHC', `$scrypt$ln=14,r=8,p=1$${b64(salt)}$${b64(scrypt)}`],
    ['scrypt, Better Auth', `${betterAuthSalt}:${betterAuthKey.toString('hex')}`],
    ['PBKDF2-SHA256 PHC', `$pbkdf2-sha256$i=600000,l=32$${b64(salt)}$${b64(pbkdf2)}`],
    ['PBKDF2-SHA256, passlib', `$pbkdf2-sha256$600000$${ab64(salt)}$${ab64(pbkdf2)}`],
    ['PBKDF2-SHA256, Django', `pbkdf2_sha256$870000$${djangoSalt}$${django.toString('base64')}`],
    ['Firebase scrypt (firebase-scrypt)', `$firebase-scrypt$${firebaseSalt}$${firebaseHash}`],
  ];
}

describe('hashes of other services', async () => {
  const made = await vectors();

  it.each(made)('%s: the right password matches, a wrong one does not', (_, hash) => {
    expect(readHash(hash, firebase)).toMatchObject({ ok: true });
    expect(verifyHash(hash, password, firebase)).toBe(true);
    expect(verifyHash(hash, `${password}!`, firebase)).toBe(false);
    expect(verifyHash(hash, '', firebase)).toBe(false);
  });

  it('a Firebase hash needs the project parameters, and other ones match nothing', () => {
    const hash = made.find(([name]) => name.startsWith('Firebase'))?.[1] ?? '';
    expect(readHash(hash)).toMatchObject({ ok: false, problem: /IMPORT_FIREBASE_SCRYPT/ });
    expect(verifyHash(hash, password)).toBe(false);
    const other = { ...firebase, signerKey: crypto.randomBytes(64).toString('base64') };
    expect(verifyHash(hash, password, other)).toBe(false);
  });
});

describe('hashes refused, with why', () => {
  const bcryptTail = 'N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy';
  it.each<[string, string, RegExp]>([
    ['bcrypt cost 14 would burn the CPU', `$2b$14$${bcryptTail}`, /cost 14 is over 13/],
    ['bcrypt cost 31', `$2b$31$${bcryptTail}`, /cost 31 is over 13/],
    ['bcrypt truncated', `$2b$10$${bcryptTail.slice(0, 40)}`, /bcrypt hash is/],
    [
      'argon2 with 1 GiB of memory',
      '$argon2id$v=19$m=1048576,t=2,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA',
      /over m=65536/,
    ],
    [
      'argon2 with 1,000 passes',
      '$argon2id$v=19$m=19456,t=1000,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA',
      /over/,
    ],
    ['argon2d', '$argon2d$v=19$m=4096,t=3,p=1$c2FsdHNhbHQ$aGFzaGhhc2g', /argon2d is not/],
    ['argon2 of an old version', '$argon2id$v=16$m=4096,t=3,p=1$c2FsdA$aGFzaA', /argon2 hash is/],
    ['scrypt with 1 GiB', '$scrypt$ln=20,r=8,p=1$c2FsdA$aGFzaA', /over 64 MiB/],
    ['scrypt N not a power of two', '$scrypt$ln=0,r=8,p=1$c2FsdA$aGFzaA', /power of 2/],
    ['PBKDF2 at ten million', '$pbkdf2-sha256$i=10000000$c2FsdA$aGFzaA', /over 1500000/],
    ['Django at ten million', `pbkdf2_sha256$10000000$salt$${'A'.repeat(43)}=`, /over 1500000/],
    ['Django truncated', 'pbkdf2_sha256$870000$salt$abc', /Django hash is/],
    ['md5-crypt', '$1$saltsalt$qjXMvbEw8oaL.CzflDugX/', /unknown hash format/],
    ['plain MD5 hex', '5f4dcc3b5aa765d61d8327deb882cf99', /unknown hash format/],
    ['a plain password', 'hunter2', /unknown hash format/],
    ['empty', '', /1 to 512 characters/],
    ['far too long', `$2b$10$${'a'.repeat(600)}`, /1 to 512 characters/],
  ])('%s', (_, hash, problem) => {
    const reading = readHash(hash);
    expect(reading).toMatchObject({ ok: false, problem });
    // Nothing refused is ever verified: it costs nothing and matches nothing. The bound only
    // catches the work being done (seconds, at these costs), not a loaded machine's pause.
    const started = performance.now();
    expect(verifyHash(hash, password)).toBe(false);
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});
