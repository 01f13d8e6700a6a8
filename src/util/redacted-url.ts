/**
 * A URL as a log line or a message may show it: a user name or password becomes `***`, and so
 * does each query parameter's value (`?token=***`), since a receiver's shared secret often rides
 * there. The scheme, host, port, path and parameter names stay, so the operator still sees which
 * URL is meant. Text that is not a URL is not shown at all.
 */
export function redactedUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    // Not a URL: nothing of it can be shown safely.
    return '(not a URL)';
  }
  const credentials = url.username !== '' || url.password !== '' ? '***@' : '';
  const query = [...url.searchParams.keys()].map((name) => `${name}=***`).join('&');
  return `${url.protocol}//${credentials}${url.host}${url.pathname}${query === '' ? '' : `?${query}`}`;
}

/** Whether a URL carries a user name or password (`https://user:pw@host/`). */
export function hasCredentials(raw: string): boolean {
  try {
    const url = new URL(raw);
    return url.username !== '' || url.password !== '';
  } catch {
    // Not a URL: refused for that, elsewhere.
    return false;
  }
}
