/**
 * What a callback URL names, judged once for every answer that carries one (the auth routes'
 * redirects and `{url}`, the callback-url cookie, the pages' hidden fields and Continue links).
 * A callback leaves the service in an app's hands: it may redirect to the URL, or to its path
 * alone, or decode it first. So "same origin" is not enough: `http://origin//evil.example/x`
 * is on the origin, but its path `//evil.example/x` is another host to whoever redirects to it.
 */
export type CallbackTarget =
  /** On the public origin, safely: the absolute URL as written (a path: the origin before it). */
  | { kind: 'here'; url: string }
  /** A well-formed http(s) URL elsewhere: Auth.js falls back to the public origin. */
  | { kind: 'elsewhere' }
  /** Nothing to follow (not http(s), no host, a path a reader could take off-site). */
  | { kind: 'unusable' };

const elsewhere: CallbackTarget = { kind: 'elsewhere' };
const unusable: CallbackTarget = { kind: 'unusable' };

// C0 controls, DEL and C1 controls (Unicode's Cc): a browser drops tab and newlines inside a
// URL (`/\t/host` is `//host` to it), and none of them belongs in a callback.
const control = /\p{Cc}/u;
// A path's first segment must not be empty nor start a host: `//host`, `/\host`, `/\t/host`.
const oneLeadingSlash = /^\/(?![/\\\p{Cc}])/u;
// How often a path is percent-decoded to judge what a reader that decodes it would follow.
const decodeRoundsMax = 3;

/** `%XX` as the byte's character; anything else as written (a lone `%` is not an error). */
function percentDecoded(text: string): string {
  return text.replace(/%([0-9a-f]{2})/gi, (_all, hex: string) =>
    String.fromCharCode(Number.parseInt(hex, 16)),
  );
}

/**
 * Whether `path` (from its first `/` on, query and fragment included) stays on `origin` for
 * every reader: as written, after the dot segments a browser resolves (`/..//host`), and
 * percent-decoded once or more (`/%2F%2Fhost`, `/%5Chost`, `/%09/host`).
 */
function isSafePath(path: string, origin: string): boolean {
  const rawPath = path.split(/[?#]/, 1)[0] ?? '';
  if (rawPath.includes('\\')) return false;
  let form = path;
  for (let round = 0; ; round += 1) {
    if (!oneLeadingSlash.test(form)) return false;
    let resolved: URL;
    try {
      resolved = new URL(form, origin);
    } catch {
      return false;
    }
    if (resolved.origin !== origin || resolved.pathname.startsWith('//')) return false;
    const decoded = percentDecoded(form);
    if (decoded === form) return true;
    // Still encoded after the rounds a reader plausibly decodes: not a callback anyone writes.
    if (round === decodeRoundsMax) return false;
    form = decoded;
  }
}

/**
 * Judges `value` against the public `origin`: a path is kept when it has exactly one leading
 * slash and stays there however it is read; an absolute URL is kept when it is written as the
 * origin itself (`scheme://host[:port]`, no user info, then nothing, a path, a query or a
 * fragment) with such a path. Another http(s) origin, or this one written another way (user
 * info, `http:/host`), is elsewhere: the caller falls back to the origin, as Auth.js does.
 */
export function judgeCallbackUrl(value: string, origin: string): CallbackTarget {
  if (control.test(value)) return unusable;
  if (value.startsWith('/')) {
    return isSafePath(value, origin) ? { kind: 'here', url: `${origin}${value}` } : unusable;
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return unusable;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return unusable;
  if (url.origin !== origin) return elsewhere;
  const written = /^https?:\/\/([^/\\?#]*)(.*)$/i.exec(value);
  if (written === null || written[1]?.includes('@') === true) return elsewhere;
  const rest = written[2] ?? '';
  // `http://origin\@host/`: WHATWG reads the backslash as a slash, other readers as user info.
  if (rest !== '' && !/^[?#]/.test(rest) && !(rest.startsWith('/') && isSafePath(rest, origin)))
    return unusable;
  return { kind: 'here', url: value };
}
