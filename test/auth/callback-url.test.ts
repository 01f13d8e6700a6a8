import { describe, expect, it } from 'vitest';
import {
  settleCallbackUrl,
  withUsableCallbackUrls,
  type CallbackUrlSources,
} from '../../src/auth/cookies/callback-url.js';
// Auth.js's default `redirect` callback (not in @auth/core's package exports): wherever
// Gatehouse settles on a URL, it must be the one Auth.js itself would redirect to.
import { defaultCallbacks } from '../../node_modules/@auth/core/lib/init.js';
import { createAuthConfig, type AuthConfigDeps } from '../../src/auth/bridge/auth-config.js';
import { expectOnOrigin, offSitePayloads, originTricks } from '../helpers/callback-targets.js';

const origin = 'http://localhost:3000';

describe('settleCallbackUrl', () => {
  it.each<[string, string, string | undefined]>([
    ['a path is resolved against the origin', '/dashboard', `${origin}/dashboard`],
    ['the root path is the origin with a slash', '/', `${origin}/`],
    ['a query and a fragment are kept', '/a?b=c#d', `${origin}/a?b=c#d`],
    // A path that names another host to whoever reads only the path of the URL (an app that
    // redirects to it) is unusable: Auth.js would settle on `<origin>//evil.example`.
    ['a protocol-relative `//host` is unusable', '//evil.example', undefined],
    ['a protocol-relative `//host/path` is unusable', '//evil.example/x', undefined],
    ['a backslash after the slash is unusable', '/\\evil.example', undefined],
    [
      '`//` naming the origin itself is still two slashes: unusable',
      '//localhost:3000/x',
      undefined,
    ],
    ['slashes percent-encoded are unusable', '/%2F%2Fevil.example', undefined],
    ['a backslash percent-encoded is unusable', '/%5Cevil.example', undefined],
    ['a tab between the slashes is unusable', '/\t/evil.example', undefined],
    ['a line break between the slashes is unusable', '/\n/evil.example', undefined],
    ['a dot segment that leaves two slashes is unusable', '/.//evil.example', undefined],
    ['dot-dot that leaves two slashes is unusable', '/a/..//evil.example', undefined],
    [
      'an absolute URL on the origin whose path starts with two slashes is unusable',
      `${origin}//evil.example/x`,
      undefined,
    ],
    ['a path with two slashes inside it is kept', '/a//b', `${origin}/a//b`],
    ['`//` alone names no host and is unusable', '//', undefined],
    ['`///` names no host and is unusable', '///', undefined],
    ['`/\\` alone names no host and is unusable', '/\\', undefined],
    [
      'a protocol-relative URL that does not parse as one is unusable',
      '//javascript:alert(1)',
      undefined,
    ],
    [
      'a protocol-relative URL with an impossible port is unusable',
      '//evil.example:99999',
      undefined,
    ],
    ['two backslashes are not a URL at all', '\\\\evil.example', undefined],
    ['an absolute URL on the origin is kept as written', `${origin}/x?y#z`, `${origin}/x?y#z`],
    ['the bare origin is kept as written', origin, origin],
    ['the origin with a slash is kept as written', `${origin}/`, `${origin}/`],
    [
      'the origin in another case is the same origin, kept as written',
      'HTTP://LOCALHOST:3000/x',
      'HTTP://LOCALHOST:3000/x',
    ],
    ['another origin falls back to the origin', 'https://evil.example/x', origin],
    [
      'the origin’s host as user info of another host falls back to the origin',
      'http://localhost:3000@evil.example/',
      origin,
    ],
    [
      'another scheme on the same host falls back to the origin',
      'https://localhost:3000/x',
      origin,
    ],
    ['another port on the same host falls back to the origin', 'http://localhost:3001/', origin],
    ['the default port is another origin than :3000', 'http://localhost/', origin],
    ['the same machine by address is another origin', 'http://127.0.0.1:3000/', origin],
    ['javascript: is unusable', 'javascript:alert(1)', undefined],
    ['data: is unusable', 'data:text/html,hi', undefined],
    ['ftp: on the origin’s host is unusable', 'ftp://localhost:3000/', undefined],
    ['a relative path without a leading slash is unusable', 'dashboard', undefined],
    ['a bare query is unusable', '?x=1', undefined],
    ['a bare fragment is unusable', '#x', undefined],
    ['the empty string is unusable', '', undefined],
    ['a leading space makes a path unusable', ' /dashboard', undefined],
    [
      'encoded CR LF stays encoded in the path',
      '/a%0d%0aSet-Cookie:x',
      `${origin}/a%0d%0aSet-Cookie:x`,
    ],
    ['a raw CR LF cannot go in a Location header: unusable', '/a\r\nSet-Cookie:x', undefined],
    ['a raw NUL cannot go in a Location header: unusable', '/\u0000', undefined],
    ['a raw NUL in an absolute URL is unusable', `${origin}/\u0000`, undefined],
    ['a space is kept as written', '/a b', `${origin}/a b`],
    ['a Latin-1 character can go in a header and is kept', '/caf\u00e9', `${origin}/caf\u00e9`],
    ['U+00FF is the last character a header can carry', `${origin}/\u00ff`, `${origin}/\u00ff`],
    ['U+0100 cannot go in a header: unusable', `${origin}/\u0100`, undefined],
    ['a character past Latin-1 in a path is unusable', '/\u20ac', undefined],
    ['the same character percent-encoded is kept', '/%E2%82%AC', `${origin}/%E2%82%AC`],
  ])('%s', async (_behaviour, value, expected) => {
    expect(settleCallbackUrl(value, origin)).toBe(expected);
    if (expected !== undefined) {
      expect(await defaultCallbacks.redirect({ url: value, baseUrl: origin })).toBe(expected);
    }
  });

  const https = 'https://auth.example.com';
  it.each<[string, string, string]>([
    [
      'an http URL to an https origin’s host falls back to the origin',
      'http://auth.example.com/x',
      https,
    ],
    [
      'the explicit default port is the same origin, kept as written',
      'https://auth.example.com:443/x',
      'https://auth.example.com:443/x',
    ],
    [
      'the host in capitals is the same origin, kept as written',
      'https://AUTH.example.com/x',
      'https://AUTH.example.com/x',
    ],
    ['the host with a trailing dot is another origin', 'https://auth.example.com./x', https],
    ['a subdomain is another origin', 'https://sub.auth.example.com/', https],
    [
      'https: with one slash to another host falls back to the origin',
      'https:/evil.example/x',
      https,
    ],
  ])('over https, %s', async (_behaviour, value, expected) => {
    expect(settleCallbackUrl(value, https)).toBe(expected);
    expect(await defaultCallbacks.redirect({ url: value, baseUrl: https })).toBe(expected);
  });
});

describe('a callback whose path leads elsewhere (issue 35, item 8)', () => {
  const https = 'https://auth.example.com';
  // Auth.js's own `redirect` callback as Gatehouse configures it, for one request (the
  // callback uses none of the deps).
  const deps = { secrets: ['s'], session: { maxAgeSeconds: 1, updateAgeSeconds: 1 } };
  const config = createAuthConfig(
    deps as unknown as AuthConfigDeps,
    false,
  )({ clientIp: '127.0.0.1', origin, previousSessionToken: undefined });
  const redirect = (url: string) => config.callbacks!.redirect!({ url, baseUrl: origin });

  it.each<[string, string, string | undefined, string]>([
    [
      'a protocol-relative `//host` is unusable',
      '//evil.example',
      undefined,
      `${origin}//evil.example`,
    ],
    [
      'a backslash after the slash is unusable',
      '/\\evil.example',
      undefined,
      `${origin}/\\evil.example`,
    ],
    ['a tab is unusable: a browser drops it', '/a\tb', undefined, `${origin}/a\tb`],
    [
      'an absolute URL on the origin whose path starts a host is unusable',
      `${origin}//evil.example/x`,
      undefined,
      `${origin}//evil.example/x`,
    ],
    [
      'user info before the origin’s host falls back to the origin',
      'http://evil.example@localhost:3000/',
      origin,
      'http://evil.example@localhost:3000/',
    ],
    [
      'http: with one slash falls back to the origin',
      'http:/localhost:3000/x',
      origin,
      'http:/localhost:3000/x',
    ],
  ])('%s (Auth.js alone keeps it)', async (_behaviour, value, expected, authjs) => {
    expect(await defaultCallbacks.redirect({ url: value, baseUrl: origin })).toBe(authjs);
    expect(settleCallbackUrl(value, origin)).toBe(expected);
    expect(await redirect(value)).toBe(expected ?? origin);
  });

  it.each([...offSitePayloads, ...originTricks.map(([, aim]) => aim(origin))])(
    '%j is never settled anywhere but the bare origin',
    async (value) => {
      expect([undefined, origin]).toContain(settleCallbackUrl(value, origin));
      expect(await redirect(value)).toBe(origin);
    },
  );

  it.each([...offSitePayloads, ...originTricks.map(([, aim]) => aim(https))])(
    'over https, %j is never settled anywhere but the bare origin',
    (value) => {
      expect([undefined, https]).toContain(settleCallbackUrl(value, https));
    },
  );

  it.each([
    '/dashboard',
    '/a/../b?c=//d#//e',
    '/search?q=%2F%2Fx',
    '/a%2F%2Fb',
    '/100%25',
    '/caf%C3%A9',
    `${origin}/x?y#z`,
    `${origin}?x`,
  ])('%j stays on the origin, path included, as Auth.js settles it', async (value) => {
    const settled = settleCallbackUrl(value, origin);
    expect(settled).toBe(await defaultCallbacks.redirect({ url: value, baseUrl: origin }));
    expectOnOrigin(settled!, origin);
  });
});

describe('withUsableCallbackUrls', () => {
  const name = 'authjs.callback-url';
  const none: CallbackUrlSources = {
    search: '',
    cookie: undefined,
    body: undefined,
    contentType: null,
  };

  it.each<[string, string, string]>([
    ['no query is left as it is', '', ''],
    ['an unusable callbackUrl is dropped', '?callbackUrl=javascript%3Aalert(1)', ''],
    [
      'the other parameters stay, re-encoded as URLSearchParams writes them',
      '?a=b%20c&callbackUrl=javascript%3Ax&d=e',
      '?a=b+c&d=e',
    ],
    [
      'the last callbackUrl is the one judged: a usable last one keeps them all',
      '?callbackUrl=javascript%3Ax&callbackUrl=%2Fok',
      '?callbackUrl=javascript%3Ax&callbackUrl=%2Fok',
    ],
    [
      'an unusable last callbackUrl drops every callbackUrl',
      '?callbackUrl=%2Fok&callbackUrl=javascript%3Ax',
      '',
    ],
    ['an empty callbackUrl counts as absent and is kept', '?callbackUrl=', '?callbackUrl='],
    [
      'another origin is usable (it falls back later) and is kept',
      '?callbackUrl=https%3A%2F%2Fevil.example',
      '?callbackUrl=https%3A%2F%2Fevil.example',
    ],
  ])('in the query, %s', (_behaviour, search, expected) => {
    expect(withUsableCallbackUrls({ ...none, search }, origin, name)).toEqual({
      ...none,
      search: expected,
    });
  });

  it.each<[string, string, string]>([
    [
      'an unusable callback-url cookie is removed and the others kept',
      `a=1; ${name}=javascript%3Ax; b=2`,
      'a=1; b=2',
    ],
    ['a usable one is left as it is', `a=1; ${name}=%2Fok; b=2`, `a=1; ${name}=%2Fok; b=2`],
    [
      'the first cookie of the name is judged, and an unusable one removes every copy',
      `${name}=javascript%3Ax;${name}=%2Fok`,
      '',
    ],
    [
      'a usable first cookie keeps a later unusable copy',
      `${name}=%2Fok;${name}=javascript%3Ax`,
      `${name}=%2Fok;${name}=javascript%3Ax`,
    ],
    ['a name padded with spaces and tabs is still the name', ` \t${name}\t =nope;x=1`, 'x=1'],
    ['a segment without `=` is kept', `junk;${name}=nope`, 'junk'],
    ['a cookie merely named like it is not touched', `x${name}=nope`, `x${name}=nope`],
  ])('in the Cookie header, %s', (_behaviour, cookie, expected) => {
    expect(withUsableCallbackUrls({ ...none, cookie }, origin, name)).toEqual({
      ...none,
      cookie: expected,
    });
  });

  it.each<[string, string | null, string, string]>([
    [
      'an unusable JSON field is deleted and the rest re-serialised',
      'application/json',
      '{"email":"a", "callbackUrl":"javascript:x"}',
      '{"email":"a"}',
    ],
    [
      'a usable JSON field leaves the body as sent',
      'application/json; charset=utf-8',
      '{"email":"a", "callbackUrl":"/ok"}',
      '{"email":"a", "callbackUrl":"/ok"}',
    ],
    [
      'a JSON field that is not a string is left',
      'application/json',
      '{"callbackUrl":5}',
      '{"callbackUrl":5}',
    ],
    ['a body that is not JSON is left', 'application/json', 'not json', 'not json'],
    ['a JSON array is left', 'application/json', '["javascript:x"]', '["javascript:x"]'],
    [
      'an unusable form field is deleted and the rest re-encoded',
      'application/x-www-form-urlencoded',
      'email=a%40b&callbackUrl=javascript%3Ax&password=p+q',
      'email=a%40b&password=p+q',
    ],
    [
      'the last form field is the one judged',
      'application/x-www-form-urlencoded',
      'callbackUrl=javascript%3Ax&callbackUrl=%2Fok',
      'callbackUrl=javascript%3Ax&callbackUrl=%2Fok',
    ],
    [
      'a body of another type is left',
      'text/plain',
      'callbackUrl=javascript%3Ax',
      'callbackUrl=javascript%3Ax',
    ],
    [
      'a body without a Content-Type is left',
      null,
      'callbackUrl=javascript%3Ax',
      'callbackUrl=javascript%3Ax',
    ],
    [
      // Auth.js's getBody tests the header with `includes`, so this body is a form to it.
      'a type that mentions the form type anywhere is read as a form',
      'text/plain; x=application/x-www-form-urlencoded',
      'callbackUrl=javascript%3Ax',
      '',
    ],
    [
      'a type that mentions JSON anywhere is read as JSON first',
      'application/x-www-form-urlencoded; application/json',
      '{"callbackUrl":"javascript:x"}',
      '{}',
    ],
  ])('in the body, %s', (_behaviour, contentType, body, expected) => {
    const sources = { ...none, body: Buffer.from(body), contentType };
    const result = withUsableCallbackUrls(sources, origin, name);
    expect(result.body?.toString('utf8')).toBe(expected);
    // An untouched body is the very same buffer: nothing is copied on the common path.
    expect(result.body === sources.body).toBe(expected === body);
    expect({ ...result, body: undefined }).toEqual({ ...none, contentType });
  });

  it('each source is judged on its own: one unusable source leaves the others', () => {
    const sources: CallbackUrlSources = {
      search: '?callbackUrl=%2Ffrom-query',
      cookie: `${name}=javascript%3Ax`,
      body: Buffer.from('callbackUrl=%2Ffrom-form'),
      contentType: 'application/x-www-form-urlencoded',
    };
    const result = withUsableCallbackUrls(sources, origin, name);
    expect(result).toEqual({ ...sources, cookie: '' });
    expect(result.body).toBe(sources.body);
  });
});
