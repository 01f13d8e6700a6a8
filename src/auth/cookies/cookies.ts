/**
 * Cookie parsing and serialisation with exactly the semantics of the `cookie` code Auth.js
 * vendors (`@auth/core/lib/vendored/cookie.js`, not exported): first occurrence of a name
 * wins, spaces and tabs (only those) around names and values are trimmed, `%` sequences are
 * decoded when valid. The fast read paths must see and write cookies byte for byte as Auth.js
 * does: a value it keeps with a no-break space must not read as a valid token here.
 */
export function parseCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  if (header === undefined || header.length < 2) return cookies;
  // The vendored parser's loop, kept step for step (a `;` before the next `=` starts over).
  const length = header.length;
  let index = 0;
  do {
    const eq = header.indexOf('=', index);
    if (eq === -1) break;
    const semicolon = header.indexOf(';', index);
    const end = semicolon === -1 ? length : semicolon;
    if (eq > end) {
      index = header.lastIndexOf(';', eq - 1) + 1;
      continue;
    }
    const name = header.slice(blankEnd(header, index, eq), blankStart(header, eq, index));
    if (!cookies.has(name)) {
      const valueStart = blankEnd(header, eq + 1, end);
      cookies.set(name, decode(header.slice(valueStart, blankStart(header, end, valueStart))));
    }
    index = end + 1;
  } while (index < length);
  return cookies;
}

const isBlank = (code: number) => code === 0x20 || code === 0x09;

/** The first index from `from` (before `max`) that is not a space or tab. */
function blankEnd(text: string, from: number, max: number): number {
  let index = from;
  while (index < max && isBlank(text.charCodeAt(index))) index += 1;
  return Math.min(index, max);
}

/** The index after the last non-blank character before `from` (not below `min`). */
function blankStart(text: string, from: number, min: number): number {
  let index = from;
  while (index > min && isBlank(text.charCodeAt(index - 1))) index -= 1;
  return index;
}

function decode(value: string): string {
  if (!value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    // Auth.js keeps an undecodable value as it came.
    return value;
  }
}

export interface CookieOptions {
  secure: boolean;
  expires?: Date;
  /** `0` clears the cookie, as Auth.js's SessionStore does. */
  maxAgeSeconds?: number;
}

/**
 * `name=value; Max-Age=…; Path=/; Expires=…; HttpOnly; Secure; SameSite=Lax`, Auth.js's
 * attribute order.
 */
export function serializeCookie(name: string, value: string, options: CookieOptions): string {
  let cookie = `${name}=${encodeURIComponent(value)}`;
  if (options.maxAgeSeconds !== undefined) cookie += `; Max-Age=${options.maxAgeSeconds}`;
  cookie += '; Path=/';
  if (options.expires !== undefined) cookie += `; Expires=${options.expires.toUTCString()}`;
  cookie += '; HttpOnly';
  if (options.secure) cookie += '; Secure';
  return `${cookie}; SameSite=Lax`;
}

/**
 * The session token as Auth.js's `SessionStore` assembles it: every non-empty cookie whose name
 * starts with the session cookie's (the cookie itself, or its `.0`, `.1`… chunks), ordered by
 * the number after the last dot, joined. Same comparator, so the same order as Auth.js's.
 */
export function sessionTokenFrom(cookies: Map<string, string>, name: string): string | undefined {
  const chunks: Record<string, string> = {};
  for (const [cookieName, value] of cookies) {
    if (cookieName.startsWith(name) && value !== '') chunks[cookieName] = value;
  }
  const names = Object.keys(chunks).sort((a, b) => {
    const aSuffix = parseInt(a.split('.').pop() || '0');
    const bSuffix = parseInt(b.split('.').pop() || '0');
    return aSuffix - bSuffix;
  });
  return names.length === 0 ? undefined : names.map((key) => chunks[key]).join('');
}

/** Which session token a request holds, and the cookies that token leaves out. */
export interface HeldSessionToken {
  /** The token, or `undefined` when the request holds none. */
  token: string | undefined;
  /** Whether the token is the session cookie alone (else Auth.js's join of several cookies). */
  whole: boolean;
  /** Cookies whose names start with the session cookie's that the token leaves out. */
  ignored: readonly string[];
}

/**
 * The session token a request holds: the session cookie itself when it reads as a token,
 * whatever else starts with its name; else Auth.js's join (`sessionTokenFrom`). Auth.js joins
 * every such cookie, so one stray beside a valid cookie (`….9=x`, `…-tokenX=y`, which a
 * sibling subdomain can plant with `Domain=`) made the token unreadable and the real cookie
 * cleared. Gatehouse never writes chunks beside a whole cookie (a token too long for one is
 * written in chunks with the whole one cleared), so a whole cookie that reads wins, in both
 * modes; without one, chunks are joined as Auth.js joins them. `reads` is asked only when the
 * whole cookie has others beside it.
 */
export function heldSessionToken(
  cookies: Map<string, string>,
  name: string,
  reads: (whole: string) => boolean,
): HeldSessionToken;
export function heldSessionToken(
  cookies: Map<string, string>,
  name: string,
  reads: (whole: string) => Promise<boolean>,
): HeldSessionToken | Promise<HeldSessionToken>;
export function heldSessionToken(
  cookies: Map<string, string>,
  name: string,
  reads: (whole: string) => boolean | Promise<boolean>,
): HeldSessionToken | Promise<HeldSessionToken> {
  // An empty cookie is no part of Auth.js's join.
  const whole = cookies.get(name) || undefined;
  const others = [...cookies.keys()].filter((n) => n !== name && n.startsWith(name));
  const joined = (): HeldSessionToken => ({
    token: sessionTokenFrom(cookies, name),
    whole: false,
    ignored: [],
  });
  if (whole === undefined) return joined();
  if (others.every((n) => cookies.get(n) === '')) return { token: whole, whole: true, ignored: [] };
  const decide = (wholeReads: boolean): HeldSessionToken =>
    wholeReads ? { token: whole, whole: true, ignored: others } : joined();
  const verdict = reads(whole);
  return typeof verdict === 'boolean' ? decide(verdict) : verdict.then(decide);
}

/**
 * The Cookie header without the cookies of these names, each `;`-separated pair judged by its
 * name as `parseCookies` reads it (spaces and tabs around it trimmed).
 */
export function withoutCookies(header: string, names: ReadonlySet<string>): string {
  return header
    .split(';')
    .filter((part) => {
      const eq = part.indexOf('=');
      return eq === -1 || !names.has(part.slice(blankEnd(part, 0, eq), blankStart(part, eq, 0)));
    })
    .join(';');
}
