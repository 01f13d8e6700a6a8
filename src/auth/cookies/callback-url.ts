import { judgeCallbackUrl } from '../../http/callback-target.js';
import { parseCookies } from './cookies.js';

// What Node writes in a header value (it throws on anything else, a Web Headers object on
// characters past U+00FF): where a settled callback URL must be able to go, as `Location`.
const sendable = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * Where a callbackUrl sends people, or `undefined` when the value is unusable: Auth.js's default
 * `redirect` callback, made strict (src/http/callback-target.ts) so that every callback the
 * service emits stays on the origin for whoever follows it, its path included:
 * `?callbackUrl=//evil.example/x` became `<origin>//evil.example/x`, and an application that
 * redirects to the path of a callback URL went off-site. The same rule is Auth.js's `redirect`
 * callback here (src/auth/bridge/auth-config.ts). Auth.js answers 500 for a query parameter or
 * callback-url cookie that is not an http(s) URL (its configuration check), redirects to its
 * error page when a form field is not a URL at all (before sign-out revokes anything), and fails
 * the same way when what it settles on cannot be a `Location` header. Gatehouse treats such a
 * value, and a path a reader could take off-site, as absent instead.
 */
export function settleCallbackUrl(value: string, origin: string): string | undefined {
  const target = judgeCallbackUrl(value, origin);
  if (target.kind === 'unusable') return undefined;
  // A foreign origin falls back to the service's own, as in Auth.js.
  const settled = target.kind === 'here' ? target.url : origin;
  return sendable.test(settled) ? settled : undefined;
}

const unusable = (value: string | undefined, origin: string): value is string =>
  value !== undefined && value !== '' && settleCallbackUrl(value, origin) === undefined;

/** What Auth.js reads a callbackUrl from: the query, the Cookie header, the body. */
export interface CallbackUrlSources {
  /** `?…` or empty. */
  search: string;
  cookie: string | undefined;
  body: Buffer | undefined;
  /** The Content-Type header as Auth.js reads it (it decides JSON or form on this string). */
  contentType: string | null;
}

/**
 * The same request with every unusable callbackUrl dropped, as if it had not been sent: Auth.js
 * then falls back as it does for an absent one (the other source, else the origin) and re-sets
 * the callback-url cookie to what it settled on. The value Auth.js would read is the one judged:
 * the last query parameter or form field (`Object.fromEntries`), the first cookie of the name.
 */
export function withUsableCallbackUrls(
  sources: CallbackUrlSources,
  origin: string,
  cookieName: string,
): CallbackUrlSources {
  let { search, cookie, body } = sources;
  const params = new URLSearchParams(search);
  if (unusable(params.getAll('callbackUrl').at(-1), origin)) {
    params.delete('callbackUrl');
    search = params.size === 0 ? '' : `?${params.toString()}`;
  }
  if (cookie !== undefined && unusable(parseCookies(cookie).get(cookieName), origin)) {
    const kept = cookie.split(';').filter((part) => {
      const eq = part.indexOf('=');
      return eq === -1 || part.slice(0, eq).replace(/^[ \t]+|[ \t]+$/g, '') !== cookieName;
    });
    cookie = kept.join(';');
  }
  if (body !== undefined && sources.contentType !== null) {
    body = withUsableBodyField(body, sources.contentType, origin);
  }
  return { search, cookie, body, contentType: sources.contentType };
}

/** Auth.js's `getBody`: JSON when the header mentions it anywhere, else a form when it does. */
function withUsableBodyField(body: Buffer, contentType: string, origin: string): Buffer {
  if (contentType.includes('application/json')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      // Refused before Auth.js (src/auth/request/body-guard.ts); nothing to settle.
      return body;
    }
    if (parsed === null || typeof parsed !== 'object') return body;
    const fields = parsed as Record<string, unknown>;
    const value = fields.callbackUrl;
    if (typeof value !== 'string' || !unusable(value, origin)) return body;
    delete fields.callbackUrl;
    return Buffer.from(JSON.stringify(fields));
  }
  if (contentType.includes('application/x-www-form-urlencoded')) {
    const params = new URLSearchParams(body.toString('utf8'));
    if (!unusable(params.getAll('callbackUrl').at(-1), origin)) return body;
    params.delete('callbackUrl');
    return Buffer.from(params.toString());
  }
  return body;
}
