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
