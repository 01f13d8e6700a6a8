import { expect } from 'vitest';

/**
 * Callback URLs that would lead off-site if the service passed them on in any form an app
 * follows: as a URL, as the path of one, or percent-decoded. `evil.example` is the host each
 * tries to reach. Several were emitted on the origin as `//evil.example/x`-style paths before
 * (issue 35, item 8): `${origin}//evil.example/x` is on the origin, its path is not.
 */
export const offSitePayloads: readonly string[] = [
  '//evil.example/x',
  '///evil.example/x',
  '/\\evil.example/x',
  '\\\\evil.example/x',
  '/\\/evil.example/x',
  '/%2F%2Fevil.example/x',
  '/%2f%2fevil.example/x',
  '/%5Cevil.example/x',
  '/%5C%5Cevil.example/x',
  '/%252F%252Fevil.example/x',
  '/%09/evil.example/x',
  '/\t/evil.example/x',
  '/\n/evil.example/x',
  '/\r\n/evil.example/x',
  '/..//evil.example/x',
  '/.//evil.example/x',
  '/a/..//evil.example/x',
  '/%2e%2e//evil.example/x',
  '/..%2F%2Fevil.example/x',
  'https:evil.example/x',
  'https:/evil.example/x',
  'https://evil.example/x',
  'HTTPS://EVIL.EXAMPLE/x',
  'javascript:alert(1)',
  'JaVaScRiPt:alert(1)',
  'data:text/html,<script>alert(1)</script>',
  '%2F%2Fevil.example/x',
  'https%3A%2F%2Fevil.example/x',
];

/** The same tricks aimed through an absolute URL on the origin: its path, user info, port. */
export const originTricks: readonly [string, (origin: string) => string][] = [
  ['its path starting a host', (origin) => `${origin}//evil.example/x`],
  ['its path starting an encoded host', (origin) => `${origin}/%2F%2Fevil.example/x`],
  ['its path starting a backslash', (origin) => `${origin}/\\evil.example/x`],
  ['a backslash before user info', (origin) => `${origin}\\@evil.example/x`],
  ['the origin as user info', (origin) => `${origin}@evil.example/x`],
  ['user info before its host', (origin) => origin.replace('//', '//evil.example@') + '/x'],
  ['one slash after the scheme', (origin) => `${origin.replace('//', '/')}//evil.example/x`],
  [
    'another scheme',
    (origin) => `${origin.replace(/^http(s?):/, (_all, s) => (s ? 'http:' : 'https:'))}/x`,
  ],
  ['another port', (origin) => `${origin.replace(/:\d+$/, '')}:1/x`],
  ['dot segments up to a host', (origin) => `${origin}/..//evil.example/x`],
  ['a tab before a host', (origin) => `${origin}/%09/evil.example/x`],
  ['a longer host that starts as its own', (origin) => `${origin}.evil.example/`],
  ['its own host, protocol-relative', (origin) => `//${new URL(origin).host}/x`],
];

/** Where an app lands that redirects to the path alone (`pathname + search + hash`). */
const app = 'https://app.invalid';

/**
 * `emitted` (a Location, a `{url}`, a hidden field, a Continue link, a cookie's value) is on
 * `origin` however an app reads it: resolved as a URL; written as a path with exactly one
 * leading slash and no backslash or control character, or as the origin itself followed by one;
 * and its path, taken alone and percent-decoded, still stays where it is resolved.
 */
export function expectOnOrigin(emitted: string, origin: string, where = ''): void {
  const label = `${where} ${JSON.stringify(emitted)}`;
  expect(new URL(emitted, origin).origin, label).toBe(origin);
  const rest = emitted.toLowerCase().startsWith(origin.toLowerCase())
    ? emitted.slice(origin.length)
    : emitted;
  expect(rest, label).toMatch(/^(?:$|[?#]|\/(?![/\\]))/);
  expect(rest.split(/[?#]/, 1)[0], label).not.toMatch(/[\\\p{Cc}]/u);
  const url = new URL(emitted, origin);
  const path = `${url.pathname}${url.search}${url.hash}`;
  for (const form of [path, decodeURIComponentLoosely(path)]) {
    expect(new URL(form, app).origin, `${label} read as the path ${form}`).toBe(app);
  }
}

function decodeURIComponentLoosely(text: string): string {
  return text.replace(/%([0-9a-f]{2})/gi, (_all, hex: string) =>
    String.fromCharCode(Number.parseInt(hex, 16)),
  );
}
