import { createHash } from 'node:crypto';
import fc from 'fast-check';
import type { RawRequest } from './raw-http.js';

/**
 * fast-check arbitraries for requests to Gatehouse's routes: odd targets, cookies, query
 * strings, headers and bodies. The run count and seed come from the environment so a long
 * run or a replay needs no edit: GATEHOUSE_FUZZ_RUNS=20000; GATEHOUSE_FUZZ_SEED and
 * GATEHOUSE_FUZZ_PATH as a failure prints them (`seed`, `path`), with `-t` naming the one
 * property to replay.
 */
export function fuzzParameters(defaultRuns: number): fc.Parameters<unknown> {
  const runs = Number(process.env.GATEHOUSE_FUZZ_RUNS ?? defaultRuns);
  const seed = process.env.GATEHOUSE_FUZZ_SEED;
  const path = process.env.GATEHOUSE_FUZZ_PATH;
  return {
    numRuns: runs,
    // A fixed seed in `npm test`: the same cases every run, so a failure there is reproducible.
    seed: seed === undefined ? 0x9a7e : Number(seed),
    ...(path !== undefined && { path }),
  };
}

/** A test timeout for a property of `defaultRuns` (or GATEHOUSE_FUZZ_RUNS) runs. */
export function fuzzTimeoutMs(defaultRuns: number, msPerRun = 25): number {
  const runs = Number(process.env.GATEHOUSE_FUZZ_RUNS ?? defaultRuns);
  return 30_000 + runs * msPerRun;
}

/** What a generator needs to know about the server it aims at. */
export interface FuzzTarget {
  /** `host:port` of the listening server. */
  authority: string;
  /** The public origin the server answers for (AUTH_URL or the Host it will be sent). */
  origin: string;
  secrets: readonly string[];
  /** Session tokens that read as a session (or did: revoked, another secret, …). */
  tokens: readonly string[];
  /** Emails and passwords worth trying. */
  emails: readonly string[];
  passwords: readonly string[];
  /** The server's cookie names; Auth.js's http ones when absent. */
  names?: { session: string; csrf: string; callbackUrl: string };
}

/** `token|hash` as Auth.js sets its CSRF cookie, for any token. */
export function csrfPair(token: string, secrets: readonly string[]): string {
  const hash = createHash('sha256')
    .update(`${token}${secrets.join(',')}`)
    .digest('hex');
  return `${token}|${hash}`;
}

export const sessionCookieName = 'authjs.session-token';
export const csrfCookieName = 'authjs.csrf-token';
export const callbackCookieName = 'authjs.callback-url';
const httpNames = {
  session: sessionCookieName,
  csrf: csrfCookieName,
  callbackUrl: callbackCookieName,
};

// ---- strings ----------------------------------------------------------------------------

/** Text as it can travel in a header value (Node reads header bytes as latin1). */
const headerSafe = (value: string) => value.replace(/[^\t\x20-\x7e\x80-\xff]/g, '');

/** encodeURIComponent that does not throw: a lone surrogate goes as U+FFFD, as in a body. */
export const encode = (value: string) =>
  encodeURIComponent(
    value.replace(
      /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g,
      '\ufffd',
    ),
  );

const latin1Char = fc.integer({ min: 0x20, max: 0xff }).map((c) => String.fromCharCode(c));
const latin1Text = (maxLength = 24) => fc.string({ unit: latin1Char, maxLength });
const anyText = (maxLength = 24) =>
  fc.oneof(
    fc.string({ maxLength }),
    fc.string({ unit: 'binary', maxLength }),
    fc.string({ unit: 'grapheme', maxLength }),
    latin1Text(maxLength),
  );

/** callbackUrl values: the ones the issue names, and anything at all. */
export function callbackUrls(origin: string): fc.Arbitrary<string> {
  const named = fc.constantFrom(
    '',
    ' ',
    'foo',
    'dashboard',
    '..',
    '../x',
    '.',
    '/',
    '//',
    '///',
    '//evil.example',
    '//evil.example/x',
    '/\\evil.example',
    '\\\\evil.example',
    '/%2F%2Fevil.example',
    'javascript:alert(1)',
    'JavaScript:alert(1)',
    'data:text/html,<script>alert(1)</script>',
    'mailto:a@example.com',
    'http:',
    'http://',
    'http://[::1',
    'https:evil.example',
    'http://evil.example',
    'https://evil.example/steal?x=1',
    'http://127.0.0.1:1/x',
    origin,
    `${origin}/`,
    `${origin}/dashboard?tab=1#top`,
    `${origin.toUpperCase()}/x`,
    `${origin}@evil.example`,
    '/dashboard',
    '/a b',
    '/x\r\nSet-Cookie: a=b',
    '/x\u0000y',
    '/x\u0001y',
    '/x\u007fy',
    '/caf\u00e9',
    '/\u6f22\u5b57',
    '/\ud800',
    '\ud800',
    `/${'a'.repeat(10 * 1024)}`,
    'a'.repeat(10 * 1024),
    ' /x',
    '/x ',
    '\t/x',
    '/api/auth/signin',
    '/api/auth/signout?x=1',
  );
  return fc.oneof(
    { weight: 3, arbitrary: named },
    { weight: 1, arbitrary: anyText(30) },
    { weight: 1, arbitrary: anyText(30).map((s) => `/${s}`) },
    { weight: 1, arbitrary: fc.webUrl({ withQueryParameters: true, withFragments: true }) },
    {
      weight: 1,
      arbitrary: fc.webPath().map((p) => `${origin}${p.startsWith('/') ? p : `/${p}`}`),
    },
  );
}

/** A cookie value as a client might send it: percent-encoded, raw, or with odd blanks. */
function cookieValueText(value: string): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constant(encode(value)),
    fc.constant(headerSafe(value)),
    fc
      .tuple(
        fc.constantFrom(' ', '\t', '\u00a0', '"', ''),
        fc.constantFrom(' ', '\t', '\u00a0', '"', ''),
      )
      .map(([before, after]) => `${before}${encode(value)}${after}`),
  );
}

// ---- session tokens ---------------------------------------------------------------------

/** Valid tokens and every way of breaking one: flipped, cut, padded, spaced, re-encoded. */
function sessionTokens(tokens: readonly string[]): fc.Arbitrary<string> {
  const token = fc.constantFrom(...tokens);
  const at = (t: string) => fc.nat({ max: Math.max(0, t.length) });
  return fc.oneof(
    { weight: 4, arbitrary: token },
    {
      weight: 2,
      arbitrary: token.chain((t) =>
        fc
          .tuple(at(t), fc.constantFrom('A', 'a', '0', '_', '-', '.', '='))
          .map(([i, ch]) => `${t.slice(0, i)}${ch}${t.slice(i + 1)}`),
      ),
    },
    { weight: 1, arbitrary: token.chain((t) => at(t).map((i) => t.slice(0, i))) },
    {
      // jose decodes base64url leniently in places; these probe where.
      weight: 3,
      arbitrary: token.chain((t) => {
        const dots = [...t].flatMap((c, i) => (c === '.' ? [i] : []));
        const boundaries = [...dots, t.length];
        return fc
          .tuple(
            fc.constantFrom(...boundaries),
            fc.constantFrom('=', '==', '===', ' ', '\t', '  ', '+', '/', '%3D', '\u00a0', '*'),
          )
          .map(([i, pad]) => `${t.slice(0, i)}${pad}${t.slice(i)}`);
      }),
    },
    {
      weight: 1,
      arbitrary: token.chain((t) =>
        fc
          .tuple(at(t), fc.constantFrom(' ', '\t', '=', '+', '/'))
          .map(([i, ch]) => `${t.slice(0, i)}${ch}${t.slice(i)}`),
      ),
    },
    { weight: 1, arbitrary: token.map((t) => t.toUpperCase()) },
    { weight: 1, arbitrary: fc.constantFrom('', 'ey', 'eyJ', '....', 'a.b.c.d.e', 'null') },
    { weight: 1, arbitrary: latin1Text(60) },
    { weight: 1, arbitrary: fc.base64String({ maxLength: 200 }).map((s) => `eyJ${s}`) },
  );
}

// ---- cookies ----------------------------------------------------------------------------

type Pair = readonly [string, string];

function sessionCookiePairs(target: FuzzTarget): fc.Arbitrary<Pair[]> {
  const tokens = sessionTokens(target.tokens);
  const sessionCookieName = (target.names ?? httpNames).session;
  const name = fc.constantFrom(
    sessionCookieName,
    sessionCookieName,
    sessionCookieName,
    ` ${sessionCookieName}`,
    `${sessionCookieName}\t`,
    'authjs.session-token',
    '__Secure-authjs.session-token',
    '__Host-authjs.session-token',
    `${sessionCookieName}X`,
    `${sessionCookieName}.1`,
    sessionCookieName.toUpperCase(),
  );
  const single = fc.tuple(name, tokens.chain(cookieValueText)).map(([n, v]): Pair[] => [[n, v]]);
  // Auth.js's chunks: `.0`, `.1`, … joined in order; some with a chunk missing or extra.
  const chunked = fc
    .tuple(tokens, fc.nat(), fc.constantFrom('both', 'first', 'second', 'swapped', 'extra'))
    .map(([t, cut, shape]): Pair[] => {
      const i = t.length === 0 ? 0 : cut % t.length;
      const a: Pair = [`${sessionCookieName}.0`, t.slice(0, i)];
      const b: Pair = [`${sessionCookieName}.1`, t.slice(i)];
      switch (shape) {
        case 'both':
          return [a, b];
        case 'first':
          return [a];
        case 'second':
          return [b];
        case 'swapped':
          return [b, a];
        default:
          return [[sessionCookieName, t], a, b];
      }
    });
  // Strays beside a whole cookie, as a sibling subdomain can plant them with `Domain=`: a whole
  // cookie that reads wins over them, in both modes.
  const stray = fc.tuple(
    fc.constantFrom('.0', '.1', '.9', '.10', '.', '.x', 'X', '-other', ' .1', '.0.1'),
    fc.oneof(fc.constantFrom('', 'x', 'garbage', 'eyJ'), fc.constantFrom(...target.tokens)),
  );
  const planted = fc
    .tuple(
      fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom(...target.tokens) },
        { weight: 1, arbitrary: tokens.chain(cookieValueText) },
      ),
      fc.array(stray, { minLength: 1, maxLength: 4 }),
      fc.nat(),
    )
    .map(([t, strays, at]): Pair[] => {
      const pairs = strays.map(([suffix, value]): Pair => [`${sessionCookieName}${suffix}`, value]);
      pairs.splice(at % (pairs.length + 1), 0, [sessionCookieName, t]);
      return pairs;
    });
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant<Pair[]>([]) },
    { weight: 4, arbitrary: single },
    { weight: 1, arbitrary: chunked },
    { weight: 2, arbitrary: planted },
  );
}

function csrfCookiePairs(target: FuzzTarget): fc.Arbitrary<Pair[]> {
  const token = fc.oneof(
    fc.stringMatching(/^[0-9a-f]{64}$/),
    fc.constantFrom('', 'x', '|', '||'),
    latin1Text(10),
  );
  const value = token.chain((t) =>
    fc.oneof(
      { weight: 4, arbitrary: fc.constant(csrfPair(t, target.secrets)) },
      // Forged: a hash of another token, another secret, or none.
      {
        weight: 1,
        arbitrary: fc.constant(`${t}|${csrfPair('other', target.secrets).split('|')[1]}`),
      },
      { weight: 1, arbitrary: fc.constant(csrfPair(t, ['not-the-secret'])) },
      { weight: 1, arbitrary: fc.constant(t) },
      { weight: 1, arbitrary: fc.constant(`${csrfPair(t, target.secrets)}|extra`) },
      { weight: 1, arbitrary: fc.constant(csrfPair(t, target.secrets).toUpperCase()) },
    ),
  );
  const csrfCookieName = (target.names ?? httpNames).csrf;
  const pair = fc.tuple(
    fc.constantFrom(
      csrfCookieName,
      csrfCookieName,
      ` ${csrfCookieName}`,
      'authjs.csrf-token',
      '__Host-authjs.csrf-token',
    ),
    value.chain(cookieValueText),
  );
  return fc.oneof(
    fc.constant<Pair[]>([]),
    pair.map((p): Pair[] => [p]),
    fc.tuple(pair, pair).map(([a, b]): Pair[] => [a, b]),
  );
}

function callbackCookiePairs(target: FuzzTarget): fc.Arbitrary<Pair[]> {
  const callbackCookieName = (target.names ?? httpNames).callbackUrl;
  const pair = fc.tuple(
    fc.constantFrom(
      callbackCookieName,
      callbackCookieName,
      `${callbackCookieName} `,
      'authjs.callback-url',
      '__Secure-authjs.callback-url',
    ),
    callbackUrls(target.origin).chain(cookieValueText),
  );
  return fc.oneof(
    fc.constant<Pair[]>([]),
    pair.map((p): Pair[] => [p]),
  );
}

const otherCookiePairs: fc.Arbitrary<Pair[]> = fc.array(
  fc.oneof(
    fc.constantFrom<Pair>(
      ['_ga', 'GA1.1.1.2'],
      ['theme', 'dark'],
      ['a', ''],
      ['', 'x'],
      ['x', '='],
    ),
    fc.tuple(fc.stringMatching(/^[A-Za-z0-9_.-]{1,12}$/), latin1Text(16).map(headerSafe)),
  ),
  { maxLength: 3 },
);

/** The Cookie header line(s): pairs in any order, odd separators, sometimes split in two. */
export function cookieHeaders(target: FuzzTarget): fc.Arbitrary<string[]> {
  return fc
    .tuple(
      sessionCookiePairs(target),
      csrfCookiePairs(target),
      callbackCookiePairs(target),
      otherCookiePairs,
    )
    .chain(([a, b, c, d]) => fc.shuffledSubarray([...a, ...b, ...c, ...d], { minLength: 0 }))
    .chain((pairs) =>
      fc
        .tuple(
          fc.constantFrom('; ', ';', ' ; ', ';\t', ';  '),
          fc.constantFrom('', ';', '; '),
          fc.nat({ max: 3 }),
          fc.boolean(),
        )
        .map(([separator, trailer, split, bare]) => {
          const parts = pairs.map(([n, v]) => `${n}=${v}`);
          if (bare && parts.length > 0) parts.splice(1, 0, 'bare-word');
          if (parts.length === 0) return [];
          // Two Cookie lines: Node joins them with `; ` (RFC 9113 8.2.3 says the same).
          if (split === 3 && parts.length > 1) {
            const half = Math.ceil(parts.length / 2);
            return [parts.slice(0, half).join(separator), parts.slice(half).join(separator)];
          }
          return [`${parts.join(separator)}${trailer}`];
        }),
    );
}

// ---- targets ----------------------------------------------------------------------------

const pathSafe = /^[\x21-\x7e]*$/;

/** A route's path written every way a client might: encoded, doubled, dotted, absolute. */
export function targetsFor(path: string, authority: string): fc.Arbitrary<string> {
  const encodeSome = fc
    .array(fc.boolean(), { minLength: path.length, maxLength: path.length })
    .chain((flags) =>
      fc.boolean().map((upper) =>
        [...path]
          .map((ch, i) => {
            if (!flags[i] || ch === '/') return ch;
            const hex = ch.charCodeAt(0).toString(16);
            return `%${upper ? hex.toUpperCase() : hex}`;
          })
          .join(''),
      ),
    );
  const segments = path.split('/');
  const atSegment = fc.nat({ max: segments.length - 1 });
  return fc.oneof(
    { weight: 16, arbitrary: fc.constant(path) },
    { weight: 2, arbitrary: encodeSome },
    {
      weight: 1,
      arbitrary: atSegment.map((i) => segments.map((s, j) => (j === i ? `/${s}` : s)).join('/')),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(atSegment, fc.constantFrom('.', '..', 'x/..', '%2e', '%2E%2E', 'x/%2e%2e'))
        .map(([i, dots]) =>
          [...segments.slice(0, i + 1), dots, ...segments.slice(i + 1)].join('/'),
        ),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(`${path}/`, `${path};x`, `${path}#frag`, path.toUpperCase()),
    },
    { weight: 1, arbitrary: fc.constant(path.replace(/\//g, '\\')) },
    { weight: 1, arbitrary: fc.constant(path.replace(/\/([^/]*)$/, '%2F$1')) },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom(
          `http://${authority}`,
          `HTTP://${authority}`,
          'http://evil.example',
          'https://x',
        )
        .map((base) => `${base}${path}`),
    },
  );
}

/** A query string (with its `?`), sometimes none, sometimes malformed. */
export function queries(origin: string): fc.Arbitrary<string> {
  const key = fc.constantFrom(
    'callbackUrl',
    'callbackUrl',
    'error',
    'code',
    'csrfToken',
    'x',
    'callbackurl',
  );
  const rawValue = fc.stringMatching(/^[A-Za-z0-9\-._~!$'()*+,;:@/%]{0,12}$/);
  const value = fc.oneof(callbackUrls(origin).map(encode), rawValue);
  // The error names Auth.js's pages and Gatehouse's sign-in page know.
  const errorName = fc.constantFrom(
    'Configuration',
    'AccessDenied',
    'Verification',
    'MissingCSRF',
    'CredentialsSignin',
    'SessionRequired',
    'default',
  );
  const param = fc.oneof(
    fc.tuple(key, value).map(([k, v]) => `${k}=${v}`),
    errorName.map((name) => `error=${name}`),
  );
  return fc.oneof(
    { weight: 3, arbitrary: fc.constant('') },
    {
      weight: 1,
      arbitrary: fc.constantFrom('?', '??', '?&', '?=', '?callbackUrl', '?callbackUrl='),
    },
    {
      weight: 4,
      arbitrary: fc
        .array(param, { minLength: 1, maxLength: 3 })
        .map((params) => `?${params.join('&')}`)
        .filter((q) => pathSafe.test(q)),
    },
  );
}

// ---- headers and bodies -----------------------------------------------------------------

/** Content-Type values: mostly the two Auth.js reads, with parameters and odd spellings. */
export const contentTypes = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      'application/x-www-form-urlencoded',
      'application/x-www-form-urlencoded; charset=UTF-8',
      'application/json',
      'application/json; charset=utf-8',
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      'APPLICATION/X-WWW-FORM-URLENCODED',
      'application/x-www-form-urlencoded; x=application/json',
      'Application/JSON',
      'application/json;x=application/x-www-form-urlencoded',
      ' application/json ',
      'application/jsonx',
      'application/x-www-form-urlencoded, application/json',
      'text/plain',
      'text/plain; x=application/json',
      'multipart/form-data; boundary=x',
      '',
    ),
  },
);

/** Form or JSON bodies carrying Auth.js's fields with any values, and bodies that are neither. */
export function bodies(target: FuzzTarget, csrfToken: fc.Arbitrary<string>): fc.Arbitrary<string> {
  const field = fc.oneof(
    fc.tuple(fc.constant('csrfToken'), csrfToken),
    fc.tuple(fc.constant('email'), fc.oneof(fc.constantFrom(...target.emails), anyText(20))),
    fc.tuple(fc.constant('password'), fc.oneof(fc.constantFrom(...target.passwords), anyText(20))),
    fc.tuple(fc.constant('callbackUrl'), callbackUrls(target.origin)),
    fc.tuple(
      fc.constantFrom('redirect', 'json', 'data', '__proto__', 'constructor', 'x'),
      anyText(8),
    ),
  );
  const fields = fc.array(field, { maxLength: 6 });
  const form = fields.map((list) => {
    const params = new URLSearchParams();
    for (const [name, value] of list) params.append(name, value);
    return params.toString();
  });
  const jsonValue: fc.Arbitrary<unknown> = fc.oneof(
    { weight: 6, arbitrary: fc.string() },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  );
  const json = fc
    .array(
      fc.oneof(
        field.map(([name, value]) => [name, value] as [string, unknown]),
        fc.tuple(
          fc.constantFrom('csrfToken', 'email', 'password', 'callbackUrl', 'data'),
          jsonValue,
        ),
      ),
      { maxLength: 6 },
    )
    .map((list) => {
      // Built by hand so duplicate keys and `__proto__` reach the wire as written.
      const members = list.map(
        ([name, value]) => `${JSON.stringify(name)}:${JSON.stringify(value)}`,
      );
      return `{${members.join(',')}}`;
    });
  return fc.oneof(
    { weight: 4, arbitrary: form },
    { weight: 3, arbitrary: json },
    {
      weight: 1,
      arbitrary: fc.constantFrom('', '{', 'null', '[]', '"x"', '1', '{"a":', 'a=%zz&b=%', '\u0000'),
    },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v) ?? '') },
    { weight: 1, arbitrary: anyText(40) },
  );
}

/** Headers beside the cookies: Origin, Sec-Fetch-Site, X-Auth-Return-Redirect, Accept, … */
export function otherHeaders(target: FuzzTarget): fc.Arbitrary<[string, string][]> {
  // Each one on about a third of the requests.
  const optional = (name: string, values: fc.Arbitrary<string>) =>
    fc.oneof(
      { weight: 2, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: values.map((v): [string, string] => [name, v]) },
    );
  return fc
    .tuple(
      optional(
        'Origin',
        fc.constantFrom(
          target.origin,
          'null',
          'https://evil.example',
          target.origin.toUpperCase(),
          '',
        ),
      ),
      optional(
        'Sec-Fetch-Site',
        fc.constantFrom('same-origin', 'none', 'cross-site', 'same-site', 'Same-Origin', 'x'),
      ),
      optional('X-Auth-Return-Redirect', fc.constantFrom('1', 'true', '0', '')),
      optional(
        'Accept',
        fc.constantFrom(
          'text/html',
          'application/json',
          '*/*',
          'text/html,application/xhtml+xml',
          '',
        ),
      ),
      optional('Expect', fc.constantFrom('100-continue', '100-Continue', 'foo', '')),
      optional('Upgrade', fc.constantFrom('websocket', 'h2c')),
      optional('X-Forwarded-For', fc.constantFrom('1.2.3.4', 'garbage', '::1')),
      optional('X-Forwarded-Proto', fc.constantFrom('https', 'http', 'gopher', 'https, http')),
      optional(
        'X-Forwarded-Host',
        fc.constantFrom('evil.example', 'a b', '', '[::1]:1', 'x:99999'),
      ),
    )
    .map((list) => list.filter((h): h is [string, string] => h !== undefined));
}

/** The bits of a request every generator shares; the caller adds method and target. */
export function requestParts(target: FuzzTarget) {
  return fc.record({
    query: queries(target.origin),
    cookies: cookieHeaders(target),
    headers: otherHeaders(target),
  });
}

/** Assembles a RawRequest with Host first and `Connection: close`. */
export function assemble(
  method: string,
  target: string,
  host: string,
  cookies: readonly string[],
  headers: readonly (readonly [string, string])[],
  body?: { contentType: string; text: string; chunked: boolean },
): RawRequest {
  const list: [string, string][] = [['Host', host]];
  for (const line of cookies) list.push(['Cookie', line]);
  list.push(...headers.map(([n, v]): [string, string] => [n, v]));
  if (body !== undefined && body.contentType !== '') list.push(['Content-Type', body.contentType]);
  list.push(['Connection', 'close']);
  return {
    method,
    target,
    headers: list,
    ...(body !== undefined && { body: body.text, chunked: body.chunked }),
  };
}
