/**
 * Cookie parsing and serialisation with exactly the semantics of the `cookie` code Auth.js
 * vendors (`@auth/core/lib/vendored/cookie.js`, not exported): first occurrence of a name
 * wins, blanks around names and values are trimmed, `%` sequences are decoded when valid.
 * The fast read paths must see and write cookies byte for byte as Auth.js does.
 */
export function parseCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  if (header === undefined) return cookies;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    const name = part.slice(0, eq).trim();
    if (name === '' || cookies.has(name)) continue;
    cookies.set(name, decode(part.slice(eq + 1).trim()));
  }
  return cookies;
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
}

/** `name=value; Path=/; Expires=…; HttpOnly; Secure; SameSite=Lax`, Auth.js's attribute order. */
export function serializeCookie(name: string, value: string, options: CookieOptions): string {
  let cookie = `${name}=${encodeURIComponent(value)}; Path=/`;
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
