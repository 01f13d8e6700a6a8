import type { RawRequest, RawResponse } from './raw-http.js';

/** An answer as two servers' answers are compared: random values masked. */
export interface Observed {
  status: number;
  headers: Record<string, string>;
  body: string;
  cookies: string[];
}

/** A Set-Cookie line with its value replaced by its kind where the value is random. */
export function cookieShape(line: string): string {
  const [pair = '', ...attributes] = line.split('; ');
  const name = pair.slice(0, pair.indexOf('='));
  const value = pair.slice(pair.indexOf('=') + 1);
  const kind =
    value === ''
      ? '<empty>'
      : /^[0-9a-f]{64}%7C[0-9a-f]{64}$/.test(value)
        ? '<csrf>'
        : value.startsWith('ey') || /session-token\.\d+$/.test(name)
          ? '<jwe>'
          : value.slice(0, 200);
  return [`${name}=${kind}`, ...attributes].join('; ');
}

export function observed(response: RawResponse): Observed {
  const headers = { ...response.headers };
  // The date is the wall clock's, not the faked one.
  delete headers.date;
  return {
    status: response.status,
    headers,
    // CSRF tokens (JSON and the pages' hidden fields) are random on both sides.
    body: response.body.toString('utf8').replace(/\b[0-9a-f]{64}\b/g, '<hex>'),
    cookies: response.cookies.map(cookieShape),
  };
}

export function describeRequest(request: RawRequest): string {
  const lines = request.headers.map(([n, v]) => `${n}: ${v}`).join('\n');
  return `${request.method} ${request.target}\n${lines}\n\n${String(request.body ?? '').slice(0, 500)}`;
}

/** What differs between two answers, field by field (empty when they match). */
export function differences(a: Observed, b: Observed): string[] {
  const found: string[] = [];
  if (a.status !== b.status) found.push(`status ${a.status} ≠ ${b.status}`);
  const names = new Set([...Object.keys(a.headers), ...Object.keys(b.headers)]);
  for (const name of names) {
    if (a.headers[name] !== b.headers[name]) {
      found.push(`header ${name}: ${a.headers[name]} ≠ ${b.headers[name]}`);
    }
  }
  if (a.body !== b.body) found.push(`body:\n  ${a.body.slice(0, 300)}\n≠ ${b.body.slice(0, 300)}`);
  if (JSON.stringify(a.cookies) !== JSON.stringify(b.cookies)) {
    found.push(`cookies:\n  ${a.cookies.join('\n  ')}\n≠ ${b.cookies.join('\n  ')}`);
  }
  return found;
}
