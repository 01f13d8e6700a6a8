import { getCsrfToken } from 'next-auth/react';

/**
 * Gatehouse's own pages on this origin (Gatehouse runs with ACCOUNT_PAGES_PATH=/api/auth/account,
 * and the rewrite forwards /api/auth/*): plain links, no code of this app behind them.
 */
export const gatehousePages = {
  account: '/api/auth/account',
  forgotPassword: '/api/auth/account/password/forgot',
  signUp: '/api/auth/account/signup',
};

/** Gatehouse's answer: its JSON on success, else its error's `code` and `message`. */
export type AccountAnswer =
  | { ok: true; body: Record<string, unknown> }
  | { ok: false; status: number; code: string; message: string };

/**
 * Posts to Gatehouse's account API (/api/account/*, forwarded by the rewrite) from the browser,
 * with next-auth's CSRF token in the `X-CSRF-Token` header: `getCsrfToken()` fetches it from
 * /api/auth/csrf, which also sets the cookie it is checked against. The session cookie rides
 * along as the browser's own.
 */
export async function postAccount(
  route: string,
  fields: Record<string, string> = {},
): Promise<AccountAnswer> {
  const csrfToken = (await getCsrfToken()) ?? '';
  const response = await fetch(`/api/account${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-csrf-token': csrfToken },
    body: JSON.stringify(fields),
  });
  const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (response.ok) return { ok: true, body };
  const error = (body.error ?? {}) as { code?: string; message?: string };
  return {
    ok: false,
    status: response.status,
    code: error.code ?? 'unknown',
    message: error.message ?? `Gatehouse answered ${response.status}.`,
  };
}
