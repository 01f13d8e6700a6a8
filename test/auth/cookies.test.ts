import { describe, expect, it } from 'vitest';
import { authCookieNames, type SessionCookiePrefix } from '../../src/auth/cookies/cookie-names.js';
import {
  heldSessionToken,
  parseCookies,
  serializeCookie,
  sessionTokenFrom,
  withoutCookies,
} from '../../src/auth/cookies/cookies.js';
// Auth.js's own parser and session-chunk store, which the module claims to match byte for byte.
// Neither is in @auth/core's package exports, so they are reached by path: a new Auth.js that
// parses differently fails these tests instead of silently splitting the fast paths from it.
import {
  parse as authJsParse,
  serialize as authJsSerialize,
} from '../../node_modules/@auth/core/lib/vendored/cookie.js';
import { SessionStore, defaultCookies } from '../../node_modules/@auth/core/lib/utils/cookie.js';

describe('parseCookies', () => {
  it.each<[string, string | undefined, Array<[string, string]>]>([
    ['no Cookie header reads as no cookies', undefined, []],
    ['an empty header reads as no cookies', '', []],
    ['a header shorter than `a=` reads as no cookies', 'a', []],
    ['a name without `=` is no cookie', 'session', []],
    ['a lone `=` is no cookie (the header is too short)', '=', []],
    ['an empty value is kept as an empty string', 'a=', [['a', '']]],
    ['an empty name is kept as the empty string', '=b', [['', 'b']]],
    ['blanks before an empty name are trimmed to the empty name', '  =v', [['', 'v']]],
    ['one pair reads as itself', 'a=b', [['a', 'b']]],
    ['the first of two cookies with one name wins', 'a=b;a=c', [['a', 'b']]],
    [
      'names are case-sensitive: `A` and `a` are two cookies',
      'A=1;a=2',
      [
        ['A', '1'],
        ['a', '2'],
      ],
    ],
    [
      'spaces around names and values are trimmed',
      ' a = b ; c=d',
      [
        ['a', 'b'],
        ['c', 'd'],
      ],
    ],
    ['tabs around names and values are trimmed', '\ta\t=\tb\t', [['a', 'b']]],
    [
      'a no-break space is not trimmed: it stays part of the value',
      'a=\u00a0b\u00a0',
      [['a', '\u00a0b\u00a0']],
    ],
    ['a space inside a name is kept', 'a b=c', [['a b', 'c']]],
    ['double quotes around a value are kept, not stripped', 'a="b"', [['a', '"b"']]],
    ['blanks inside double quotes are kept with the quotes', 'a=" b "', [['a', '" b "']]],
    ['a value runs to the next `;`, so `=` inside it is kept', 'a=b=c', [['a', 'b=c']]],
    ['a comma does not separate cookies', 'a=1, b=2', [['a', '1, b=2']]],
    ['valid percent sequences are decoded', 'a=%41%42', [['a', 'AB']]],
    ['an encoded `;` is decoded into the value', 'a=b%3Bc', [['a', 'b;c']]],
    ['an encoded NUL is decoded like any other byte', 'a=%00', [['a', '\u0000']]],
    ['a truncated UTF-8 sequence is kept undecoded', 'a=%E0%A4%A', [['a', '%E0%A4%A']]],
    ['a `%` that starts no escape is kept as it came', 'a=%zz', [['a', '%zz']]],
    ['a lone `%` is kept as it came', 'a=%', [['a', '%']]],
    ['a `+` is not a space in a cookie', 'a=+', [['a', '+']]],
    ['a segment without `=` is skipped', 'junk; a=b', [['a', 'b']]],
    ['a segment without `=` before the next `=` starts the next name', 'a;b=c', [['b', 'c']]],
    ['trailing junk after the last pair is ignored', 'junk;a=b;more junk', [['a', 'b']]],
    [
      'empty segments between pairs are skipped',
      'a=b;;c=d',
      [
        ['a', 'b'],
        ['c', 'd'],
      ],
    ],
    [
      'a blank segment between pairs is skipped',
      'a=b; ; c=d',
      [
        ['a', 'b'],
        ['c', 'd'],
      ],
    ],
    ['a trailing `;` is ignored', 'a=b;', [['a', 'b']]],
    ['a leading `;` is ignored', ';a=b', [['a', 'b']]],
    [
      'names an object keeps special are ordinary cookies',
      '__proto__=x; toString=y',
      [
        ['__proto__', 'x'],
        ['toString', 'y'],
      ],
    ],
  ])('%s', (_behaviour, header, expected) => {
    const parsed = parseCookies(header);
    expect([...parsed]).toEqual(expected);
    // Auth.js reads the same header into the same cookies.
    expect({ ...authJsParse(header ?? '') }).toEqual(Object.fromEntries(expected));
  });
});

describe('serializeCookie', () => {
  const expires = new Date(Date.UTC(2030, 0, 2, 3, 4, 5));

  it.each<[string, string, string, { secure: boolean; expires?: Date }, string]>([
    [
      'a session-length cookie over http has Path, HttpOnly and SameSite=Lax only',
      'authjs.csrf-token',
      'abc|def',
      { secure: false },
      'authjs.csrf-token=abc%7Cdef; Path=/; HttpOnly; SameSite=Lax',
    ],
    [
      'over https the cookie is also Secure',
      '__Host-authjs.csrf-token',
      'abc',
      { secure: true },
      '__Host-authjs.csrf-token=abc; Path=/; HttpOnly; Secure; SameSite=Lax',
    ],
    [
      'an expiry is written as an HTTP date between Path and HttpOnly',
      '__Secure-authjs.session-token',
      'eyJ.x',
      { secure: true, expires },
      '__Secure-authjs.session-token=eyJ.x; Path=/; Expires=Wed, 02 Jan 2030 03:04:05 GMT; HttpOnly; Secure; SameSite=Lax',
    ],
    [
      'the value is percent-encoded: a callback URL cannot break out of its cookie',
      'authjs.callback-url',
      'http://localhost:3000/a b;c=é',
      { secure: false },
      'authjs.callback-url=http%3A%2F%2Flocalhost%3A3000%2Fa%20b%3Bc%3D%C3%A9; Path=/; HttpOnly; SameSite=Lax',
    ],
    [
      'an empty value is written as `name=`',
      'authjs.session-token',
      '',
      { secure: false, expires: new Date(0) },
      'authjs.session-token=; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Lax',
    ],
  ])('%s', (_behaviour, name, value, options, expected) => {
    expect(serializeCookie(name, value, options)).toBe(expected);
    // Byte for byte what Auth.js writes with its cookie options.
    expect(
      authJsSerialize(name, value, {
        path: '/',
        expires: options.expires,
        httpOnly: true,
        secure: options.secure,
        sameSite: 'lax',
      }),
    ).toBe(expected);
  });

  it.each([
    ['a value parsed back is the value written', 'http://localhost:3000/a b;c=é%'],
    ['a value of only special characters round-trips', ';,= "\\%'],
  ])('%s', (_behaviour, value) => {
    const header = serializeCookie('n', value, { secure: false }).split(';')[0];
    expect(parseCookies(header).get('n')).toBe(value);
  });
});

describe('sessionTokenFrom', () => {
  const name = 'authjs.session-token';

  it.each<[string, Array<[string, string]>, string | undefined]>([
    ['no cookies is no token', [], undefined],
    ['the unchunked session cookie is the token', [[name, 'abc']], 'abc'],
    ['an empty session cookie is no token', [[name, '']], undefined],
    [
      'chunks are joined in the order of their number, not of the header',
      [
        [`${name}.1`, 'B'],
        [`${name}.0`, 'A'],
        [`${name}.2`, 'C'],
      ],
      'ABC',
    ],
    [
      'chunk numbers compare as numbers: .10 comes after .9',
      [
        [`${name}.10`, 'K'],
        [`${name}.2`, 'C'],
        [`${name}.9`, 'J'],
      ],
      'CJK',
    ],
    [
      'an empty chunk is left out of the join',
      [
        ['other', 'O'],
        [`${name}.0`, 'A'],
        [`${name}.1`, ''],
      ],
      'A',
    ],
    [
      // Auth.js's comparator reads the unchunked name's suffix as NaN, which sorts as "equal":
      // the order then depends on the sort, and is kept exactly as Auth.js produces it.
      'an unchunked cookie mixed with chunks is joined where Auth.js joins it',
      [
        [`${name}.1`, 'B'],
        [name, 'X'],
        [`${name}.0`, 'A'],
      ],
      'BXA',
    ],
    [
      // A prefix match, as Auth.js's SessionStore does: a sibling cookie corrupts the token
      // (and the read fails) rather than being ignored differently from Auth.js.
      'a cookie whose name only starts with the session name is joined in too',
      [
        [`${name}-other`, 'E'],
        [name, 'X'],
      ],
      'EX',
    ],
    ['the name is matched case-sensitively', [['Authjs.session-token', 'U']], undefined],
    [
      'the https name is another cookie than the http one',
      [['__Secure-authjs.session-token', 'S']],
      undefined,
    ],
  ])('%s', (_behaviour, cookies, expected) => {
    expect(sessionTokenFrom(new Map(cookies), name)).toBe(expected);
    // Auth.js assembles the same token ('' where it has none).
    const store = new SessionStore({ name, options: {} }, Object.fromEntries(cookies), console);
    expect(store.value).toBe(expected ?? '');
  });
});

describe('heldSessionToken', () => {
  const name = 'authjs.session-token';
  // 'good' is the one value that reads as a token here.
  const reads = (token: string) => token === 'good';

  it.each<[string, Array<[string, string]>, ReturnType<typeof heldSessionToken>]>([
    ['no cookies is no token', [], { token: undefined, whole: false, ignored: [] }],
    [
      'the whole cookie alone is the token',
      [[name, 'bad']],
      { token: 'bad', whole: true, ignored: [] },
    ],
    [
      'empty cookies beside it are no part of it',
      [
        [`${name}.9`, ''],
        [name, 'bad'],
      ],
      { token: 'bad', whole: true, ignored: [] },
    ],
    [
      'a whole cookie that reads wins over strays, which are left out',
      [
        [`${name}.0`, 'x'],
        [name, 'good'],
        [`${name}X`, 'y'],
        [`${name}.1`, ''],
      ],
      { token: 'good', whole: true, ignored: [`${name}.0`, `${name}X`, `${name}.1`] },
    ],
    [
      'a whole cookie that does not read is joined with the rest, as Auth.js joins them',
      [
        [name, 'bad'],
        [`${name}.9`, 'x'],
      ],
      { token: 'badx', whole: false, ignored: [] },
    ],
    [
      'chunks without a whole cookie are joined, as Auth.js joins them',
      [
        [`${name}.1`, 'od'],
        [`${name}.0`, 'go'],
      ],
      { token: 'good', whole: false, ignored: [] },
    ],
    [
      'an empty whole cookie is no whole cookie',
      [
        [name, ''],
        [`${name}.0`, 'good'],
      ],
      { token: 'good', whole: false, ignored: [] },
    ],
  ])('%s', async (_behaviour, cookies, expected) => {
    const map = new Map(cookies);
    expect(heldSessionToken(map, name, reads)).toEqual(expected);
    expect(await heldSessionToken(map, name, async (token) => reads(token))).toEqual(expected);
  });

  it('asks whether the whole cookie reads only when others stand beside it', () => {
    const asked: string[] = [];
    const ask = (token: string) => {
      asked.push(token);
      return true;
    };
    heldSessionToken(new Map([[name, 'a']]), name, ask);
    heldSessionToken(new Map([[`${name}.0`, 'b']]), name, ask);
    expect(asked).toEqual([]);
    heldSessionToken(
      new Map([
        [name, 'a'],
        [`${name}.0`, 'b'],
      ]),
      name,
      ask,
    );
    expect(asked).toEqual(['a']);
  });
});

describe('withoutCookies', () => {
  it.each(['a=1; b=2; c=3', ' b =2;a=1;\tb=3; c=4', 'bare; b=2; a=1', 'b=; a=x=y;b', ''])(
    'drops every pair of the names, as parseCookies reads them: %j',
    (header) => {
      const kept = withoutCookies(header, new Set(['b']));
      const expected = parseCookies(header);
      expected.delete('b');
      // Later pairs of a dropped name must not surface as its first occurrence.
      expect(parseCookies(kept)).toEqual(expected);
      expect(parseCookies(kept).has('b')).toBe(false);
    },
  );
});

describe('authCookieNames', () => {
  it.each<[string, boolean, SessionCookiePrefix, ReturnType<typeof authCookieNames>]>([
    [
      'over http the names carry no prefix, whatever prefix is configured',
      false,
      '__Host-',
      {
        session: 'authjs.session-token',
        csrf: 'authjs.csrf-token',
        callbackUrl: 'authjs.callback-url',
      },
    ],
    [
      'over https the session cookie is __Secure- by default and the CSRF cookie __Host-',
      true,
      '__Secure-',
      {
        session: '__Secure-authjs.session-token',
        csrf: '__Host-authjs.csrf-token',
        callbackUrl: '__Secure-authjs.callback-url',
      },
    ],
    [
      'over https with the __Host- prefix only the session cookie changes',
      true,
      '__Host-',
      {
        session: '__Host-authjs.session-token',
        csrf: '__Host-authjs.csrf-token',
        callbackUrl: '__Secure-authjs.callback-url',
      },
    ],
  ])('%s', (_behaviour, secure, prefix, expected) => {
    expect(authCookieNames(secure, prefix)).toEqual(expected);
  });

  it.each([
    ['over http', false],
    ['over https', true],
  ])('%s with the default prefix the names are Auth.js’s defaults', (_scheme, secure) => {
    const authJs = defaultCookies(secure);
    expect(authCookieNames(secure, '__Secure-')).toEqual({
      session: authJs.sessionToken.name,
      csrf: authJs.csrfToken.name,
      callbackUrl: authJs.callbackUrl.name,
    });
  });
});
