// Password hashes of other services, read and verified as they are (adoption spec §3): an
// imported user signs in with their old password, which is then re-hashed to argon2id. Plain
// CommonJS, as the hashing threads' script (argon2-worker.cjs) that runs every verification
// loads it as it is; the import reads hashes with it too (types: legacy-hashes.d.cts).
//
// Each format's cost is capped: a stored hash decides how much CPU and memory a stranger's
// guess at that address burns, so a hash past its cap is refused at import, and verifies
// nothing if one is found in the store anyway. Caps, against today's argon2id (about 10 ms here):
// bcrypt cost 13 (about 340 ms), PBKDF2 1,500,000 iterations (about 450 ms), scrypt and argon2
// 64 MiB of memory and 16× and 8× the work of their usual settings.
'use strict';
const crypto = require('node:crypto');

const bcryptMaxCost = 13;
const pbkdf2MaxIterations = 1_500_000;
const scryptMaxMemoryBytes = 64 * 1024 * 1024;
const scryptMaxWork = 2 ** 21; // N·r·p
const argon2MaxMemoryKib = 65_536;
const argon2MaxWork = 65_536 * 4; // m·t, in KiB passes
const argon2MaxParallelism = 16;
const digestMaxBytes = 128;

const b64 = /^[A-Za-z0-9+/.\-_]+={0,2}$/;

/** Standard, URL-safe or passlib's "ab64" base64 (`.` for `+`), padding optional. */
function decodeBase64(text) {
  if (!b64.test(text)) return null;
  const bytes = Buffer.from(
    text.replace(/\./g, '+').replace(/-/g, '+').replace(/_/g, '/'),
    'base64',
  );
  return bytes.length === 0 ? null : bytes;
}

/** `a=1,b=2` → {a: 1, b: 2} with only the named keys, each a whole number; else null. */
function readParams(text, names) {
  const params = {};
  for (const part of text.split(',')) {
    const [key, value, ...rest] = part.split('=');
    if (rest.length > 0 || !names.includes(key) || !/^\d{1,10}$/.test(value ?? '')) return null;
    params[key] = Number(value);
  }
  return names.every((name) => name in params) ? params : null;
}

const refused = (problem) => ({ ok: false, problem });

function readBcrypt(hash) {
  const match = /^\$2[aby]\$(\d\d)\$[./A-Za-z0-9]{53}$/.exec(hash);
  if (match === null) return refused('a bcrypt hash is $2b$NN$ and 53 characters of salt and hash');
  const cost = Number(match[1]);
  if (cost < 4) return refused(`bcrypt cost ${cost} is below the format's least, 4`);
  if (cost > bcryptMaxCost)
    return refused(`bcrypt cost ${cost} is over ${bcryptMaxCost}: a guess would cost too much CPU`);
  return { ok: true, format: 'bcrypt', cost: `bcrypt:${cost}` };
}

function readArgon2(hash) {
  const parts = hash.split('$');
  // ['', 'argon2id', 'v=19', 'm=..,t=..,p=..', salt, digest]
  if (parts.length !== 6 || parts[2] !== 'v=19')
    return refused('an argon2 hash is $argon2id$v=19$m=…,t=…,p=…$salt$hash');
  const params = readParams(parts[3], ['m', 't', 'p']);
  if (params === null || decodeBase64(parts[4]) === null || decodeBase64(parts[5]) === null)
    return refused('an argon2 hash is $argon2id$v=19$m=…,t=…,p=…$salt$hash');
  const { m, t, p } = params;
  if (m < 8 || t < 1 || p < 1) return refused('argon2 parameters below the format’s least');
  if (m > argon2MaxMemoryKib || m * t > argon2MaxWork || p > argon2MaxParallelism)
    return refused(`argon2 m=${m},t=${t},p=${p} is over m=65536 (64 MiB), m·t=262144, p=16`);
  return { ok: true, format: parts[1], cost: `${parts[1]}:${m},${t},${p}` };
}

/** scrypt's N, r, p within the caps, else the problem. */
function scryptProblem(n, r, p) {
  if (n < 2 || (n & (n - 1)) !== 0 || r < 1 || p < 1)
    return 'scrypt needs N a power of 2, r and p ≥ 1';
  if (128 * n * r > scryptMaxMemoryBytes || n * r * p > scryptMaxWork)
    return `scrypt N=${n},r=${r},p=${p} is over 64 MiB of memory or N·r·p=${scryptMaxWork}`;
  return null;
}

/** A PHC string's salt and digest (its 4th and 5th parts) read, and the digest not too long. */
const phcBytesRead = (parts) => {
  const digest = decodeBase64(parts[4] ?? '');
  return (
    decodeBase64(parts[3] ?? '') !== null && digest !== null && digest.length <= digestMaxBytes
  );
};

function readScryptPhc(hash) {
  const parts = hash.split('$');
  const params = parts.length === 5 ? readParams(parts[2], ['ln', 'r', 'p']) : null;
  if (params === null || !phcBytesRead(parts))
    return refused('a scrypt hash is $scrypt$ln=…,r=…,p=…$salt$hash');
  if (params.ln > 30) return refused('scrypt ln is over 30');
  const problem = scryptProblem(2 ** params.ln, params.r, params.p);
  return problem === null
    ? { ok: true, format: 'scrypt', cost: `scrypt:${params.ln},${params.r},${params.p}` }
    : refused(problem);
}

function readPbkdf2Phc(hash) {
  const parts = hash.split('$');
  // PHC `$pbkdf2-sha256$i=…,l=…$salt$hash`, or passlib's `$pbkdf2-sha256$rounds$salt$hash`.
  let iterations = null;
  if (parts.length === 5 && /^\d{1,10}$/.test(parts[2])) iterations = Number(parts[2]);
  else if (parts.length === 5) {
    const params = readParams(parts[2], ['i', 'l']) ?? readParams(parts[2], ['i']);
    iterations = params === null ? null : params.i;
  }
  if (iterations === null || !phcBytesRead(parts))
    return refused('a PBKDF2 hash is $pbkdf2-sha256$i=…$salt$hash');
  return pbkdf2Cost('pbkdf2-sha256', iterations);
}

function readDjango(hash) {
  const match = /^pbkdf2_sha256\$(\d{1,10})\$([^$]{1,128})\$([A-Za-z0-9+/]{43}=)$/.exec(hash);
  if (match === null) return refused('a Django hash is pbkdf2_sha256$iterations$salt$hash');
  return pbkdf2Cost('django-pbkdf2-sha256', Number(match[1]));
}

function pbkdf2Cost(format, iterations) {
  if (iterations < 1) return refused('PBKDF2 needs at least one iteration');
  if (iterations > pbkdf2MaxIterations)
    return refused(`PBKDF2 at ${iterations} iterations is over ${pbkdf2MaxIterations}`);
  return { ok: true, format, cost: `pbkdf2:${iterations}` };
}

function readFirebase(hash, firebase) {
  const parts = hash.split('$');
  if (parts.length !== 4 || decodeBase64(parts[2]) === null || decodeBase64(parts[3]) === null)
    return refused('a Firebase hash is $firebase-scrypt$salt$hash (base64, from auth:export)');
  if (firebase === undefined || firebase === null)
    return refused('a Firebase hash needs IMPORT_FIREBASE_SCRYPT (the project’s hash parameters)');
  return { ok: true, format: 'firebase-scrypt', cost: 'firebase-scrypt' };
}

/**
 * What a stored hash is and whether it may be verified: `{ok: true, format, cost}` (`cost`
 * names its parameters, for timing), or `{ok: false, problem}` saying why not in a sentence.
 */
function readHash(hash, firebase) {
  if (typeof hash !== 'string' || hash.length === 0 || hash.length > 512)
    return refused('a hash is a string of 1 to 512 characters');
  if (hash.startsWith('$2')) return readBcrypt(hash);
  if (hash.startsWith('$argon2id$') || hash.startsWith('$argon2i$')) return readArgon2(hash);
  if (hash.startsWith('$scrypt$')) return readScryptPhc(hash);
  if (hash.startsWith('$pbkdf2-sha256$')) return readPbkdf2Phc(hash);
  if (hash.startsWith('pbkdf2_sha256$')) return readDjango(hash);
  if (hash.startsWith('$firebase-scrypt$')) return readFirebase(hash, firebase);
  if (/^[0-9a-f]{32}:[0-9a-f]{128}$/.test(hash))
    return { ok: true, format: 'scrypt-better-auth', cost: 'scrypt:14,16,1' };
  if (hash.startsWith('$argon2d$'))
    return refused('argon2d is not a password hash; argon2id or argon2i are');
  return refused(
    'an unknown hash format: bcrypt, argon2id/argon2i, scrypt, PBKDF2-SHA256, Django, Better Auth or Firebase scrypt are read',
  );
}

const equal = (a, b) => a.length === b.length && crypto.timingSafeEqual(a, b);

function scryptKey(password, salt, n, r, p, length) {
  return crypto.scryptSync(password, salt, length, {
    N: n,
    r,
    p,
    maxmem: 128 * n * r + 1024 * 1024,
  });
}

const verifiers = {
  bcrypt: (hash, password) => require('@node-rs/bcrypt').verifySync(password, hash),
  argon2id: (hash, password) => require('@node-rs/argon2').verifySync(hash, password),
  argon2i: (hash, password) => require('@node-rs/argon2').verifySync(hash, password),
  scrypt(hash, password) {
    const [, , text, salt, digest] = hash.split('$');
    const { ln, r, p } = readParams(text, ['ln', 'r', 'p']);
    const expected = decodeBase64(digest);
    return equal(scryptKey(password, decodeBase64(salt), 2 ** ln, r, p, expected.length), expected);
  },
  'scrypt-better-auth'(hash, password) {
    // Better Auth: the hex salt as text, N=16384, r=16, p=1, 64 bytes, the password NFKC.
    const [salt, key] = hash.split(':');
    const derived = scryptKey(password.normalize('NFKC'), salt, 16384, 16, 1, 64);
    return equal(derived, Buffer.from(key, 'hex'));
  },
  'pbkdf2-sha256'(hash, password) {
    const [, , text, salt, digest] = hash.split('$');
    const iterations = /^\d+$/.test(text) ? Number(text) : readParams(text.split(',')[0], ['i']).i;
    const expected = decodeBase64(digest);
    const derived = crypto.pbkdf2Sync(
      password,
      decodeBase64(salt),
      iterations,
      expected.length,
      'sha256',
    );
    return equal(derived, expected);
  },
  'django-pbkdf2-sha256'(hash, password) {
    const [, iterations, salt, digest] = hash.split('$');
    const derived = crypto.pbkdf2Sync(password, salt, Number(iterations), 32, 'sha256');
    return equal(derived, Buffer.from(digest, 'base64'));
  },
  'firebase-scrypt'(hash, password, firebase) {
    const [, , salt, digest] = hash.split('$');
    const key = scryptKey(
      password,
      Buffer.concat([decodeBase64(salt), Buffer.from(firebase.saltSeparator, 'base64')]),
      2 ** firebase.memCost,
      firebase.rounds,
      1,
      32,
    );
    const cipher = crypto.createCipheriv('aes-256-ctr', key, Buffer.alloc(16, 0));
    const signed = Buffer.concat([
      cipher.update(Buffer.from(firebase.signerKey, 'base64')),
      cipher.final(),
    ]);
    return equal(signed, decodeBase64(digest));
  },
};

/** Whether `password` matches a stored hash of any read format; false, never a throw, else. */
function verifyHash(hash, password, firebase) {
  const reading = readHash(hash, firebase);
  if (!reading.ok) return false;
  try {
    return verifiers[reading.format](hash, password, firebase) === true;
  } catch {
    return false;
  }
}

module.exports = { readHash, verifyHash, limits: { bcryptMaxCost, pbkdf2MaxIterations } };
