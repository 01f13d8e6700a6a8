import {
  createCipheriv,
  createHash,
  createHmac,
  hkdfSync,
  randomBytes,
  type CipherGCM,
} from 'node:crypto';
import { deflateRawSync } from 'node:zlib';
import {
  decode as authjsDecode,
  encode as authjsEncode,
  getToken,
  type JWTDecodeParams,
  type JWTEncodeParams,
  type JWTOptions,
} from '@auth/core/jwt';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { canonicalToken, createJweCodec } from '../../src/auth/session/jwe-codec.js';

const SALT = 'authjs.session-token';
const NEW = 'new-secret-0123456789abcdef0123456789abcdef';
const OLD = 'old-secret-fedcba9876543210fedcba9876543210';
const CBC = 'A256CBC-HS512';
const GCM = 'A256GCM';
const CLAIMS = { sub: 'user-1', name: 'Ada', email: 'ada@example.com', picture: null };

const codec = createJweCodec();

// Compile-time proof that the codec plugs into Auth.js's `jwt` option and `getToken`.
const asAuthjsOption: Pick<JWTOptions, 'encode' | 'decode'> = codec;
const asEncode: (params: JWTEncodeParams) => unknown = codec.encode;
const asDecode: (params: JWTDecodeParams) => unknown = codec.decode;
void [asAuthjsOption, asEncode, asDecode];

type Claims = Record<string, unknown>;
type Encoder = (token: Claims, secret: string | string[]) => Promise<string>;
type Decoder = (token: string, secret: string | string[]) => Promise<Claims | null>;

const encoders: Record<string, Encoder> = {
  ours: async (token, secret) => codec.encode({ token, secret, salt: SALT }),
  authjs: (token, secret) => authjsEncode({ token, secret, salt: SALT }),
};
// Auth.js throws where we return null; its callers treat both as "no session".
const decoders: Record<string, Decoder> = {
  ours: async (token, secret) => codec.decode({ token, secret, salt: SALT }),
  authjs: async (token, secret) => {
    try {
      return await authjsDecode({ token, secret, salt: SALT });
    } catch {
      return null;
    }
  },
};

const pairs = Object.keys(encoders).flatMap((e) =>
  Object.keys(decoders).map((d) => ({ encoder: e, decoder: d })),
);

// Independent JWE sealer, so tests can mint validly authenticated tokens with odd headers.
function testKey(secret: string, enc: 'A256CBC-HS512' | 'A256GCM' = CBC, salt = SALT) {
  const info = `Auth.js Generated Encryption Key (${salt})`;
  const key = Buffer.from(hkdfSync('sha256', secret, salt, info, enc === CBC ? 64 : 32));
  const jwk = JSON.stringify({ k: key.toString('base64url'), kty: 'oct' });
  const kid = createHash(enc === CBC ? 'sha512' : 'sha256')
    .update(jwk)
    .digest('base64url');
  return { key, kid };
}

function seal(
  header: Claims,
  plaintext: Buffer,
  key: Buffer,
  mode: 'cbc' | 'gcm' = 'cbc',
  gcmIv = 12,
) {
  const h = Buffer.from(JSON.stringify(header)).toString('base64url');
  const aad = Buffer.from(h, 'ascii');
  let iv: Buffer, ciphertext: Buffer, tag: Buffer;
  if (mode === 'gcm') {
    iv = randomBytes(gcmIv);
    const gcm = createCipheriv('aes-256-gcm', key, iv) as CipherGCM;
    gcm.setAAD(aad);
    ciphertext = Buffer.concat([gcm.update(plaintext), gcm.final()]);
    tag = gcm.getAuthTag();
  } else {
    iv = randomBytes(16);
    const cbc = createCipheriv('aes-256-cbc', key.subarray(32), iv);
    ciphertext = Buffer.concat([cbc.update(plaintext), cbc.final()]);
    const al = Buffer.alloc(8);
    al.writeBigUInt64BE(BigInt(aad.length * 8));
    const mac = createHmac('sha512', key.subarray(0, 32));
    tag = mac.update(aad).update(iv).update(ciphertext).update(al).digest().subarray(0, 32);
  }
  return [h, '', iv, ciphertext, tag].map((p) => p.toString('base64url')).join('.');
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value));
const future = () => Math.floor(Date.now() / 1000) + 3600;
const headerOf = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString()) as Claims;

describe('interop with Auth.js', () => {
  it.each(pairs)('$encoder encode -> $decoder decode, one secret', async ({ encoder, decoder }) => {
    const token = await encoders[encoder]!(CLAIMS, NEW);
    const decoded = await decoders[decoder]!(token, NEW);
    expect(decoded).toMatchObject(CLAIMS);
    expect(decoded).toEqual(await decoders.authjs!(token, NEW));
  });

  it.each(pairs)(
    '$encoder encode -> $decoder decode, key rotation',
    async ({ encoder, decoder }) => {
      const withNew = await encoders[encoder]!(CLAIMS, [NEW, OLD]);
      const withOld = await encoders[encoder]!(CLAIMS, [OLD, NEW]);
      expect(await decoders[decoder]!(withNew, [NEW, OLD])).toMatchObject(CLAIMS);
      expect(await decoders[decoder]!(withNew, [NEW])).toMatchObject(CLAIMS);
      expect(await decoders[decoder]!(withOld, [NEW, OLD])).toMatchObject(CLAIMS);
      expect(await decoders[decoder]!(withOld, [NEW])).toBeNull();
    },
  );

  it('writes the same header, segment layout and claims as Auth.js', async () => {
    const input = { ...CLAIMS, iat: 1, jti: 'x' };
    const ours = codec.encode({ token: input, secret: NEW, salt: SALT });
    const theirs = await authjsEncode({ token: input, secret: NEW, salt: SALT });
    expect(ours.split('.')[0]).toBe(theirs.split('.')[0]);
    expect(headerOf(ours)).toEqual({ alg: 'dir', enc: CBC, kid: testKey(NEW).kid });
    const [, encryptedKey, iv, , tag] = ours.split('.');
    expect(encryptedKey).toBe('');
    expect(Buffer.from(iv!, 'base64url')).toHaveLength(16);
    expect(Buffer.from(tag!, 'base64url')).toHaveLength(32);
    expect(ours).toMatch(/^[\w-]+\.\.[\w-]+\.[\w-]+\.[\w-]+$/);

    const claims = codec.decode({ token: ours, secret: NEW, salt: SALT })!;
    const theirClaims = codec.decode({ token: theirs, secret: NEW, salt: SALT })!;
    expect(Object.keys(claims)).toEqual(Object.keys(theirClaims));
    expect(Object.keys(claims)).toEqual([...Object.keys(CLAIMS), 'iat', 'jti', 'exp']);
    expect(claims.iat).toBeGreaterThan(1);
    expect(claims.jti).not.toBe('x');
    expect(claims.exp).toBe((claims.iat as number) + 30 * 24 * 60 * 60);
    expect(claims.jti).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    const short = codec.encode({ token: CLAIMS, secret: NEW, salt: SALT, maxAge: 60 });
    const shortClaims = await authjsDecode({ token: short, secret: NEW, salt: SALT });
    expect(shortClaims!.exp).toBe(shortClaims!.iat! + 60);
  });

  it('the test sealer is faithful: Auth.js accepts what it mints', async () => {
    const { key, kid } = testKey(NEW);
    const token = seal({ alg: 'dir', enc: CBC, kid }, json({ ...CLAIMS, exp: future() }), key);
    expect(await authjsDecode({ token, secret: NEW, salt: SALT })).toMatchObject(CLAIMS);
  });

  it.each([
    { name: 'with kid', withKid: true },
    { name: 'without kid', withKid: false },
  ])('decodes A256GCM tokens like Auth.js ($name)', async ({ withKid }) => {
    const { key, kid } = testKey(OLD, GCM);
    const header = withKid ? { alg: 'dir', enc: GCM, kid } : { alg: 'dir', enc: GCM };
    const token = seal(header, json({ ...CLAIMS, exp: future() }), key, 'gcm');
    expect(await authjsDecode({ token, secret: [OLD, NEW], salt: SALT })).toMatchObject(CLAIMS);
    expect(codec.decode({ token, secret: [OLD, NEW], salt: SALT })).toMatchObject(CLAIMS);
    expect(codec.decode({ token, secret: [NEW], salt: SALT })).toBeNull();
  });

  it('tries every secret for a token without kid (Auth.js only tries the first)', async () => {
    const { key } = testKey(OLD);
    const token = seal({ alg: 'dir', enc: CBC }, json({ ...CLAIMS, exp: future() }), key);
    expect(codec.decode({ token, secret: [NEW, OLD], salt: SALT })).toMatchObject(CLAIMS);
    expect(await decoders.authjs!(token, [NEW, OLD])).toBeNull();
    expect(await decoders.authjs!(token, [OLD, NEW])).toMatchObject(CLAIMS);
  });

  it('throws only for a configuration error, like Auth.js', async () => {
    const token = codec.encode({ token: CLAIMS, secret: NEW, salt: SALT });
    expect(() => codec.decode({ token, secret: [], salt: SALT })).toThrow(TypeError);
    expect(() => codec.encode({ token: CLAIMS, secret: '', salt: SALT })).toThrow(TypeError);
    await expect(authjsEncode({ token: CLAIMS, secret: '', salt: SALT })).rejects.toThrow();
  });
});

describe('rejects bad tokens with null, never a throw', () => {
  const valid = codec.encode({ token: CLAIMS, secret: NEW, salt: SALT });
  const parts = valid.split('.');
  const { key, kid } = testKey(NEW);
  const body = json({ ...CLAIMS, exp: future() });
  const withPart = (i: number, value: string) =>
    parts.map((p, j) => (j === i ? value : p)).join('.');
  const flip = (s: string) => {
    const i = s.length >> 1;
    return s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
  };
  const sealed = (patch: Claims, plaintext = body) =>
    seal({ alg: 'dir', enc: CBC, kid, ...patch }, plaintext, key);
  // atob refuses a segment of length 4n + 1, where Buffer.from would drop the last character.
  const withDanglingCiphertextChar = () => {
    for (let n = 0; ; n++) {
      const t = codec.encode({ token: { pad: 'x'.repeat(n) }, secret: NEW, salt: SALT });
      const [h, k, iv, ct, tag] = t.split('.');
      if (ct!.length % 4 === 0) return [h, k, iv, `${ct}A`, tag].join('.');
    }
  };
  const rewriteHeader = (patch: Claims) =>
    withPart(
      0,
      Buffer.from(JSON.stringify({ ...headerOf(valid), ...patch })).toString('base64url'),
    );

  const cases: { name: string; token: string | undefined; authjsAccepts?: boolean }[] = [
    { name: 'tampered header', token: withPart(0, flip(parts[0]!)) },
    { name: 'non-empty encrypted key', token: withPart(1, 'AAAA') },
    { name: 'tampered iv', token: withPart(2, flip(parts[2]!)) },
    { name: 'tampered ciphertext', token: withPart(3, flip(parts[3]!)) },
    { name: 'tampered tag', token: withPart(4, flip(parts[4]!)) },
    { name: 'truncated by one char', token: valid.slice(0, -1) },
    { name: 'truncated to half', token: valid.slice(0, valid.length >> 1) },
    { name: 'missing last segment', token: parts.slice(0, 4).join('.') },
    { name: 'extra segment', token: `${valid}.AAAA` },
    { name: 'empty string', token: '' },
    { name: 'undefined', token: undefined },
    { name: 'garbage', token: 'garbage' },
    { name: 'five empty segments', token: '....' },
    { name: 'non-base64url characters', token: 'é.é.é.é.é' },
    {
      name: 'padding where the length is not a multiple of four',
      token: withPart(2, `${parts[2]}=`),
    },
    { name: 'a + in a segment', token: withPart(3, `+${parts[3]!.slice(1)}`) },
    { name: 'header enc rewritten to A256GCM', token: rewriteHeader({ enc: GCM }) },
    {
      name: 'header enc rewritten to A128CBC-HS256',
      token: rewriteHeader({ enc: 'A128CBC-HS256' }),
    },
    { name: 'header alg rewritten to none', token: rewriteHeader({ alg: 'none' }) },
    { name: 'wrong salt', token: codec.encode({ token: CLAIMS, secret: NEW, salt: 'other' }) },
    { name: 'ciphertext with a dangling character', token: withDanglingCiphertextChar() },
    { name: 'sealed alg: none', token: sealed({ alg: 'none' }) },
    { name: 'sealed alg: A256KW', token: sealed({ alg: 'A256KW' }) },
    { name: 'sealed without enc', token: sealed({ enc: undefined }) },
    { name: 'sealed unknown kid', token: sealed({ kid: 'nope' }) },
    { name: 'sealed crit header', token: sealed({ crit: ['x'], x: 1 }) },
    { name: 'sealed zip: DEF, uncompressed', token: sealed({ zip: 'DEF' }) },
    // Auth.js never compresses, but jose inflates what a key holder compressed; we refuse.
    {
      name: 'sealed zip: DEF',
      token: sealed({ zip: 'DEF' }, deflateRawSync(body)),
      authjsAccepts: true,
    },
    { name: 'sealed non-object claims', token: sealed({}, json([1, 2])) },
    { name: 'sealed non-JSON claims', token: sealed({}, Buffer.from('{')) },
    {
      name: 'sealed invalid UTF-8 claims',
      token: sealed({}, Buffer.from([...json({ sub: '' }).subarray(0, -2), 0xff, 0x22, 0x7d])),
    },
    {
      name: 'sealed A256GCM with a 16-byte iv',
      token: seal({ alg: 'dir', enc: GCM }, body, testKey(NEW, GCM).key, 'gcm', 16),
    },
    { name: 'sealed string exp', token: sealed({}, json({ exp: 'never' })) },
    { name: 'sealed header sub mismatch', token: sealed({ sub: 'admin' }) },
  ];

  it.each(cases)('$name', async ({ token, authjsAccepts = false }) => {
    expect(codec.decode({ token, secret: [NEW, OLD], salt: SALT })).toBeNull();
    // Same verdict as Auth.js, except where we are deliberately stricter.
    const theirs = token === undefined ? null : await decoders.authjs!(token, [NEW, OLD]);
    expect(theirs !== null).toBe(authjsAccepts);
  });

  // jose decodes base64url with atob's forgiving rules (Node 24 has no Uint8Array.fromBase64):
  // padding and ASCII blanks in the IV, ciphertext and tag, which the tag does not cover,
  // still read. The fast read path must read such a cookie as Auth.js does.
  it.each([
    ['a padded IV', withPart(2, `${parts[2]}==`)],
    ['a padded tag', withPart(4, `${parts[4]}=`)],
    [
      'a space inside the ciphertext',
      withPart(3, `${parts[3]!.slice(0, 8)} ${parts[3]!.slice(8)}`),
    ],
    ['a tab after the tag', withPart(4, `${parts[4]}\t`)],
  ])('%s reads as it does in Auth.js', async (_name, token) => {
    const ours = codec.decode({ token, secret: [NEW, OLD], salt: SALT });
    expect(ours).toMatchObject(CLAIMS);
    expect(await decoders.authjs!(token, [NEW, OLD])).toMatchObject(CLAIMS);
  });

  it.each(Object.keys(encoders))(
    'any one-character edit of a %s token gets the same verdict as Auth.js',
    async (encoder) => {
      const token = await encoders[encoder]!(CLAIMS, NEW);
      for (let i = 0; i <= token.length; i++) {
        const edits = [
          token.slice(0, i) + (token[i] === 'A' ? 'B' : 'A') + token.slice(i + 1),
          token.slice(0, i) + (token[i] === '_' ? '-' : '_') + token.slice(i + 1),
          token.slice(0, i) + token.slice(i + 1),
          token.slice(0, i) + 'A' + token.slice(i),
        ];
        for (const edited of edits) {
          const ours = codec.decode({ token: edited, secret: NEW, salt: SALT });
          expect(ours, edited).toEqual(await decoders.authjs!(edited, NEW));
        }
      }
    },
  );
});

// The session read caches decoded tokens under this form: it must read exactly as the token.
describe('canonicalToken', () => {
  const valid = codec.encode({ token: CLAIMS, secret: NEW, salt: SALT });
  const [h, k, iv, ct, tag] = valid.split('.') as [string, string, string, string, string];

  it('a token as Auth.js writes it is its own canonical form', async () => {
    expect(canonicalToken(valid)).toBe(valid);
    const theirs = await encoders.authjs!(CLAIMS, NEW);
    expect(canonicalToken(theirs)).toBe(theirs);
  });

  it.each([
    ['blanks in the IV', [h, k, ` ${iv}\n`, ct, tag]],
    ['blanks through the ciphertext', [h, k, iv, ct.split('').join(' '), tag]],
    ['padding and a form feed after the tag', [h, k, iv, ct, `${tag}=\f`]],
    ['padding on every segment that takes it', [h, k, `${iv}==`, ct, `${tag}=`]],
  ])('%s: the clean token', (_name, parts) => {
    expect(canonicalToken(parts.join('.'))).toBe(valid);
  });

  it.each([
    ['a space in the protected header', [`${h.slice(0, 4)} ${h.slice(4)}`, k, iv, ct, tag]],
    ['a space as the encrypted key', [h, ' ', iv, ct, tag]],
    ['padding where the length is not a multiple of four', [h, k, `${iv}=`, ct, tag]],
  ])('%s: left as sent, so it does not read as the clean token', (_name, parts) => {
    const token = parts.join('.');
    expect(canonicalToken(token)).not.toBe(valid);
    expect(codec.decode({ token: canonicalToken(token), secret: NEW, salt: SALT })).toBeNull();
  });

  it.each(Object.keys(encoders))(
    'any blank or padding inserted in a %s token: the canonical form reads as Auth.js reads the token',
    async (encoder) => {
      const token = await encoders[encoder]!(CLAIMS, NEW);
      for (let i = 0; i <= token.length; i++) {
        for (const inserted of [' ', '\t', '\n', '=', '==']) {
          const edited = token.slice(0, i) + inserted + token.slice(i);
          const canonical = canonicalToken(edited);
          expect(canonicalToken(canonical), edited).toBe(canonical);
          const ours = codec.decode({ token: canonical, secret: NEW, salt: SALT });
          expect(ours, edited).toEqual(codec.decode({ token: edited, secret: NEW, salt: SALT }));
          expect(ours, edited).toEqual(await decoders.authjs!(edited, NEW));
        }
      }
    },
  );
});

describe('time claims with a 15 s tolerance', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  const t0 = Date.UTC(2030, 0, 1);
  const cases = [
    { claim: 'exp', offset: -16, accepted: false },
    { claim: 'exp', offset: -15, accepted: false },
    { claim: 'exp', offset: -10, accepted: true },
    { claim: 'exp', offset: 1, accepted: true },
    { claim: 'nbf', offset: 16, accepted: false },
    { claim: 'nbf', offset: 15, accepted: true },
    { claim: 'nbf', offset: 10, accepted: true },
    { claim: 'iat', offset: 3600, accepted: true },
  ];

  it.each(cases)(
    '$claim = now + $offset s accepted: $accepted',
    async ({ claim, offset, accepted }) => {
      const now = Math.floor(t0 / 1000);
      const { key, kid } = testKey(NEW);
      // Sealed directly because encode, like Auth.js's, overwrites iat and exp.
      const claims = { ...CLAIMS, exp: now + 3600, [claim]: now + offset };
      const token = seal({ alg: 'dir', enc: CBC, kid }, json(claims), key);
      const reader = createJweCodec({ now: () => t0 + 999 });
      expect(reader.decode({ token, secret: NEW, salt: SALT }) !== null).toBe(accepted);
      // Auth.js reads the wall clock, so fake only Date to compare verdicts at the same instant.
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(t0 + 999);
      expect((await decoders.authjs!(token, NEW)) !== null).toBe(accepted);
    },
  );

  it('sets exp from maxAge on the injected clock, including a negative maxAge', () => {
    const at = (ms: number) => createJweCodec({ now: () => ms });
    const token = at(t0).encode({ token: CLAIMS, secret: NEW, salt: SALT, maxAge: -16 });
    expect(at(t0).decode({ token, secret: NEW, salt: SALT })).toBeNull();
    const fresh = at(t0).encode({ token: CLAIMS, secret: NEW, salt: SALT, maxAge: -10 });
    expect(at(t0).decode({ token: fresh, secret: NEW, salt: SALT })).toMatchObject({
      iat: t0 / 1000,
      exp: t0 / 1000 - 10,
    });
  });
});

describe('large sessions chunked by Auth.js', () => {
  const big = {
    ...CLAIMS,
    roles: Array.from({ length: 400 }, (_, i) => `role-${i}-${'x'.repeat(8)}`),
  };

  // What Auth.js's SessionStore writes: `name.0`, `name.1`, ... of at most 3936 characters.
  function chunkedCookie(value: string, size = 3936) {
    const chunks: string[] = [];
    for (let i = 0; i * size < value.length; i++)
      chunks.push(`${SALT}.${i}=${value.slice(i * size, (i + 1) * size)}`);
    return chunks.join('; ');
  }

  it.each(pairs)(
    '$encoder encode -> $decoder decode through getToken',
    async ({ encoder, decoder }) => {
      const token = await encoders[encoder]!(big, [NEW, OLD]);
      expect(token.length).toBeGreaterThan(2 * 3936);
      const req = { headers: { cookie: chunkedCookie(token) } };
      const decode = decoder === 'ours' ? codec.decode : authjsDecode;
      expect(await getToken({ req, secret: [NEW, OLD], salt: SALT, raw: true })).toBe(token);
      expect(await getToken({ req, secret: [NEW, OLD], salt: SALT, decode })).toMatchObject(big);
    },
  );
});
