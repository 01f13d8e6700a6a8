/**
 * The query parameter that carries a throttled sign-in's wait to the sign-in page: a plain form
 * post follows the 302, and the browser drops its `Retry-After` on the way.
 */
export const retryAfterParam = 'retryAfter';

/**
 * Beside it when the password was right and the step after it is paused (a second factor's
 * lock): the page then says the codes are paused, not the password.
 */
export const afterPasswordParam = 'afterPassword';

// THROTTLE_LOCK_SECONDS is at most a day; a longer value in a URL did not come from us.
const maxRetryAfterSeconds = 86_400;

/**
 * Auth.js's throttled redirect (`…code=rate_limited`) with the wait appended. Only for the 302
 * that browsers follow: the JSON variant next-auth clients read keeps Auth.js's exact `{url}`.
 */
export function withRetryAfter(
  response: Response,
  retryAfterSeconds: number,
  afterPassword = false,
): Response {
  const location = response.headers.get('location');
  if (location === null) return response;
  const headers = new Headers(response.headers);
  const separator = location.includes('?') ? '&' : '?';
  const step = afterPassword ? `&${afterPasswordParam}=1` : '';
  headers.set('location', `${location}${separator}${retryAfterParam}=${retryAfterSeconds}${step}`);
  return new Response(response.body, { status: response.status, headers });
}

/** The wait in whole seconds, or undefined when the parameter is missing or not ours. */
export function readRetryAfter(params: URLSearchParams): number | undefined {
  const raw = params.get(retryAfterParam);
  if (raw === null || !/^[1-9][0-9]{0,5}$/.test(raw)) return undefined;
  const seconds = Number(raw);
  return seconds <= maxRetryAfterSeconds ? seconds : undefined;
}
