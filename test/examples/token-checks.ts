// The checks the Express and Python guide tests make of their example's token API (`GET /api/me`,
// which takes a token from Gatehouse's /api/auth/token as `Authorization: Bearer`): it answers
// the signed-in person for a real token, refuses a forged, changed, misdirected or expired one
// saying why, and, once the session has ended, still takes the token until it expires while
// Gatehouse's introspection says inactive at once.
//
// Gatehouse runs with a signing key this file makes (TOKEN_SIGNING_KEY_FILE) and an introspection
// credential (INTROSPECTION_TOKEN_FILE): the key signs a real token's claims again with `exp`
// moved into the past, so "refused once expired" is checked now rather than after TOKEN_TTL
// (30 s at the least), and with another issuer or audience under a key the API trusts.
import { generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decodeJwt, decodeProtectedHeader, SignJWT, type JWTPayload } from 'jose';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';

/** What the example APIs answer for each refusal (verify-token.js, app.py's token_claims). */
export const refusal = {
  missing: 'Send a token from /api/auth/token as Authorization: Bearer.',
  malformed: 'That is not a token.',
  notGatehouse: 'The token is not signed by Gatehouse.',
  notForThisApi: 'The token is not for this API: its issuer or audience differ.',
  expired: 'The token has expired: get a new one from /api/auth/token.',
} as const;

export interface TokenKeys {
  /** Gatehouse's environment for these checks: its signing key and introspection credentials. */
  gatehouseEnv: NodeJS.ProcessEnv;
  signingKey: KeyObject;
  introspectionCredential: string;
  dispose(): void;
}

/** A P-256 signing key and an introspection credential for Gatehouse, in files of a temp folder. */
export function tokenKeys(): TokenKeys {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-guide-token-keys-'));
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const keyFile = path.join(dir, 'token-key.pem');
  fs.writeFileSync(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  const credential = randomBytes(24).toString('hex');
  const credentials = path.join(dir, 'introspection-tokens');
  fs.writeFileSync(credentials, `guide-test:${credential}\n`, { mode: 0o600 });
  return {
    gatehouseEnv: { TOKEN_SIGNING_KEY_FILE: keyFile, INTROSPECTION_TOKEN_FILE: credentials },
    signingKey: privateKey,
    introspectionCredential: credential,
    dispose: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

export interface ApiAnswer {
  status: number;
  body: Record<string, unknown> & { error?: { code: string; message: string } };
  challenge: string | null;
}

/**
 * In a signed-in page on the app's origin, what the guide shows a page doing: a token from
 * `/api/auth/token` (the session cookie goes along), then the API called with it.
 */
export async function callFromPage(page: Page, apiPath: string) {
  return page.evaluate(async (api) => {
    const minted = await fetch('/api/auth/token');
    const { token } = (await minted.json()) as { token: string };
    const answer = await fetch(api, { headers: { authorization: `Bearer ${token}` } });
    return { token, status: answer.status, body: (await answer.json()) as Record<string, unknown> };
  }, apiPath);
}

/**
 * What the guide shows a script doing: a personal access token (made here from the page's
 * session, as the account API makes them) traded at `/api/auth/token` for a token, which the API
 * is then called with.
 */
export async function callWithAccessToken(page: Page, appOrigin: string, api: string) {
  const made = await page.evaluate(async () => {
    const { csrfToken } = (await (await fetch('/api/auth/csrf')).json()) as { csrfToken: string };
    const answer = await fetch('/api/account/tokens', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-csrf-token': csrfToken },
      body: JSON.stringify({ name: 'a script of the guide test' }),
    });
    return { status: answer.status, body: (await answer.json()) as { token: string } };
  });
  expect(made.status).toBe(201);
  const minted = await fetch(`${appOrigin}/api/auth/token`, {
    headers: { authorization: `Bearer ${made.body.token}` },
  });
  expect(minted.status).toBe(200);
  const { token } = (await minted.json()) as { token: string };
  return callApi(api, `Bearer ${token}`);
}

/** `GET api` with `authorization` (none when undefined), from this process. */
export async function callApi(api: string, authorization?: string): Promise<ApiAnswer> {
  const answer = await fetch(api, authorization ? { headers: { authorization } } : {});
  return {
    status: answer.status,
    body: (await answer.json()) as ApiAnswer['body'],
    challenge: answer.headers.get('www-authenticate'),
  };
}

const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** `real`'s claims with `changes`, signed by `key` under `real`'s key id (or `kid`). */
function resigned(real: string, key: KeyObject, changes: JWTPayload, kid?: string) {
  const header = decodeProtectedHeader(real);
  return new SignJWT({ ...decodeJwt(real), ...changes })
    .setProtectedHeader({ alg: 'ES256', typ: 'JWT', kid: kid ?? header.kid! })
    .sign(key);
}

/** `real` with `exp` a few seconds past and `iat` a TTL before it, signed by Gatehouse's key. */
export function expiredCopy(real: string, keys: TokenKeys): Promise<string> {
  const claims = decodeJwt(real);
  const exp = Math.floor(Date.now() / 1000) - 5;
  return resigned(real, keys.signingKey, { exp, iat: exp - (claims.exp! - claims.iat!) });
}

/** Each kind of token the API must refuse, with what it says; `real` is a token it takes. */
export async function expectRefusals(api: string, real: string, keys: TokenKeys): Promise<void> {
  const [head, , signature] = real.split('.');
  const claims = decodeJwt(real);
  const elsewhere = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  const cases: [string, string | undefined, string][] = [
    ['no token', undefined, refusal.missing],
    ['not a JWT', 'Bearer not-a-token', refusal.malformed],
    [
      'its claims changed under its signature',
      `Bearer ${head}.${b64({ ...claims, sub: 'someone-else' })}.${signature}`,
      refusal.notGatehouse,
    ],
    [
      'another key under its key id',
      `Bearer ${await resigned(real, elsewhere, {})}`,
      refusal.notGatehouse,
    ],
    [
      'a key not in the set',
      `Bearer ${await resigned(real, elsewhere, {}, 'not-a-key')}`,
      refusal.notGatehouse,
    ],
    [
      'unsigned (alg none)',
      `Bearer ${b64({ alg: 'none', typ: 'JWT', kid: decodeProtectedHeader(real).kid })}.${b64(claims)}.`,
      refusal.notGatehouse,
    ],
    [
      'another issuer',
      `Bearer ${await resigned(real, keys.signingKey, { iss: 'https://elsewhere.example' })}`,
      refusal.notForThisApi,
    ],
    [
      'another audience',
      `Bearer ${await resigned(real, keys.signingKey, { aud: 'https://api.elsewhere.example' })}`,
      refusal.notForThisApi,
    ],
    ['expired', `Bearer ${await expiredCopy(real, keys)}`, refusal.expired],
  ];
  for (const [what, authorization, message] of cases) {
    const answer = await callApi(api, authorization);
    expect({ what, status: answer.status, error: answer.body.error }).toEqual({
      what,
      status: 401,
      error: { code: 'invalid_token', message },
    });
    expect(answer.challenge, what).toBe('Bearer error="invalid_token"');
  }
  expect((await callApi(api, `Bearer ${real}`)).status).toBe(200);
}

/** Gatehouse's introspection of `token` (`origin`: where this process reaches Gatehouse). */
export async function activeOf(origin: string, token: string, keys: TokenKeys) {
  const answer = await fetch(`${origin}/api/auth/introspect`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${keys.introspectionCredential}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ token }),
  });
  expect(answer.status).toBe(200);
  return ((await answer.json()) as { active: boolean }).active;
}

/**
 * After sign-out: `token`, minted before it, is inactive on introspection at once; the API, which
 * checks signatures only, still takes it until it expires, and refuses it once expired (its claims
 * with `exp` past, signed by Gatehouse's key); no new token is given for the ended session.
 */
export async function expectRevocationBound(
  api: string,
  token: string,
  ended: { gatehouse: string; appOrigin: string; cookie: string },
  keys: TokenKeys,
): Promise<void> {
  expect(await activeOf(ended.gatehouse, token, keys)).toBe(false);
  const still = await callApi(api, `Bearer ${token}`);
  expect(still.status).toBe(200);
  expect(still.body.id).toBe(decodeJwt(token).sub);
  const expired = await callApi(api, `Bearer ${await expiredCopy(token, keys)}`);
  expect([expired.status, expired.body.error?.message]).toEqual([401, refusal.expired]);
  const again = await fetch(`${ended.appOrigin}/api/auth/token`, {
    headers: { cookie: ended.cookie },
  });
  expect(again.status).toBe(401);
}
