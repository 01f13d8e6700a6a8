import type { SignInOutcome } from '../../observe/observer.js';
import { authBasePath } from './auth-config.js';
import { sessionTokenFrom } from '../cookies/cookies.js';
import type { AuthRequestContext } from '../request/request-context.js';

/*
 * What the bridge changes in Auth.js's answers (src/auth/bridge/authjs-bridge.ts), each a new
 * Response with Auth.js's own status and headers otherwise kept.
 */

/** Auth.js's JSON answer with `fields` added after its own; anything else as it is. */
export async function withJsonFields(
  response: Response,
  fields: Readonly<Record<string, unknown>>,
): Promise<Response> {
  let body: Record<string, unknown>;
  try {
    body = (await response.clone().json()) as Record<string, unknown>;
  } catch {
    // No JSON to add to (a HEAD request's answer has no body): Auth.js's answer as it is.
    return response;
  }
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  return new Response(JSON.stringify({ ...body, ...fields }), {
    status: response.status,
    headers,
  });
}

/**
 * Auth.js's redirect to its `error=Configuration` page (its word for any failure it will not
 * name) sent to the sign-in page as `error=<type>&provider=<id>` instead, for a browser (302)
 * and for a client that asked for the URL (`{ url }`). Any other answer as it is.
 */
export async function withFailureShownAs(
  response: Response,
  origin: string,
  shownAs: { error: string; provider: string },
): Promise<Response> {
  const shown = `${origin}${authBasePath}/signin?${new URLSearchParams(shownAs)}`;
  const isFailure = (url: string | null | undefined) =>
    typeof url === 'string' && new URL(url, origin).searchParams.get('error') === 'Configuration';
  if (response.status === 302 && isFailure(response.headers.get('location'))) {
    const headers = new Headers(response.headers);
    headers.set('location', shown);
    return new Response(null, { status: 302, headers });
  }
  if (!response.headers.get('content-type')?.startsWith('application/json')) return response;
  let body: { url?: unknown };
  try {
    body = (await response.clone().json()) as { url?: unknown };
  } catch {
    return response;
  }
  if (typeof body.url !== 'string' || !isFailure(body.url)) return response;
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  return new Response(JSON.stringify({ ...body, url: shown }), {
    status: response.status,
    headers,
  });
}

/** Auth.js's answer with one more `Set-Cookie`, after its own. */
export function withCookie(response: Response, setCookie: string): Response {
  const headers = new Headers(response.headers);
  headers.append('set-cookie', setCookie);
  return new Response(response.body, { status: response.status, headers });
}

/**
 * Auth.js's error page takes its status from the `error` it names: any client can ask for
 * `?error=Configuration` and get a 500. The page itself was served; the error it describes
 * happened to an earlier request, so it answers 200 here (a 5xx means this request failed).
 */
export function servedPage(path: string, response: Response): Response {
  if (path !== `${authBasePath}/error` || response.status < 500) return response;
  return new Response(response.body, { status: 200, headers: response.headers });
}

/**
 * Every token a request holds: each non-empty session cookie alone, Auth.js's join of them all,
 * and the join of the others without the session cookie itself (chunks of another session).
 */
export function heldSessionTokens(cookies: Map<string, string>, name: string): string[] {
  const tokens = new Set<string>();
  const others = new Map<string, string>();
  for (const [cookieName, value] of cookies) {
    if (!cookieName.startsWith(name) || value === '') continue;
    tokens.add(value);
    if (cookieName !== name) others.set(cookieName, value);
  }
  for (const joined of [sessionTokenFrom(cookies, name), sessionTokenFrom(others, name)]) {
    if (joined !== undefined) tokens.add(joined);
  }
  return [...tokens];
}

/**
 * How a sign-in that went through Auth.js ended: our interruption if there was one, else the
 * error Auth.js reported (a refused CSRF token, wrong details: `CredentialsSignin` or a way
 * in's own refusal), else what `authorize` decided. Anything else (Auth.js failed after a
 * success, or never asked) is a failure of ours.
 */
export function signInOutcome(
  context: AuthRequestContext,
  refusalErrors: ReadonlySet<string>,
): SignInOutcome {
  const kind = context.interruption?.kind;
  if (kind !== undefined) return kind === 'internal' ? 'error' : kind;
  const authError = context.authError;
  if (authError === undefined) return context.signInResult === 'success' ? 'success' : 'error';
  if (authError === 'MissingCSRF') return 'csrf';
  if (authError === 'CredentialsSignin' || refusalErrors.has(authError))
    return context.signInResult === 'invalid' ? 'invalid' : 'error';
  return 'error';
}

/** The value a `Set-Cookie` list gives `name`, decoded; undefined when it sets none. */
export function setCookieValue(cookies: string[], name: string): string | undefined {
  const line = cookies.find((cookie) => cookie.startsWith(`${name}=`));
  if (line === undefined) return undefined;
  const end = line.indexOf(';');
  const raw = line.slice(name.length + 1, end === -1 ? undefined : end);
  try {
    return decodeURIComponent(raw);
  } catch {
    // Auth.js encodes what it sets; an undecodable value is not one of its.
    return undefined;
  }
}
