import type { Client } from './client.js';

/** A JSON POST as an Auth.js client makes it: the CSRF token of /api/auth/csrf in the body. */
export async function postWithCsrf(client: Client, path: string, body: Record<string, unknown>) {
  const csrfToken = await client.csrfToken();
  return client.request(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ csrfToken, ...body }),
  });
}

/** `<status> <error code>` of an error answer, e.g. `400 invalid_token`. */
export async function errorCode(response: Response): Promise<string> {
  const body = (await response.json()) as { error: { code: string } };
  return `${response.status} ${body.error.code}`;
}
