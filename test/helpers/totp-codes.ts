// TOTP codes for the suites that sign in with a second factor against a service whose clock is
// fixed at `base` (the middle of the current 30-second step): a test moves that clock by whole
// steps only, and says which step each code belongs to.
import type { Kysely } from 'kysely';
import { Secret, TOTP } from 'otpauth';
import type { Database } from '../../src/db/schema.js';
import { postWithCsrf } from './account-requests.js';
import type { Client } from './client.js';

export const stepMs = 30_000;
export const base = Math.floor(Date.now() / stepMs) * stepMs + stepMs / 2;

/** The code of `secret` (base32) for the step `step` steps from `base`. */
export const codeAt = (secret: string, step: number) =>
  TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: base + step * stepMs });

/** A right-looking code that is none of the window's (so a refusal is about the code). */
export function wrongCode(secret: string, step: number): string {
  const right = new Set([-1, 0, 1].map((delta) => codeAt(secret, step + delta)));
  for (let n = 0; ; n += 1) {
    const candidate = String(n).padStart(6, '0');
    if (!right.has(candidate)) return candidate;
  }
}

/** The `code` of Auth.js's JSON answer to a refused credentials sign-in (null on success). */
export async function refusalCode(response: Response): Promise<string | null> {
  const { url } = (await response.json()) as { url: string };
  return new URL(url).searchParams.get('code');
}

/** What each live session of a user records as proved (`sessions.proofs`). */
export async function proofsOf(db: Kysely<Database>, userId: string) {
  const rows = await db
    .selectFrom('sessions')
    .select('proofs')
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .execute();
  return rows.map((row) => row.proofs);
}

/**
 * Turns TOTP on for the signed-in `client` (a recent session), confirmed with the code of
 * `confirmStep`: its secret and the ten recovery codes.
 */
export async function turnOnTotp(client: Client, confirmStep = 0) {
  const setup = await postWithCsrf(client, '/api/account/totp/setup', {});
  if (setup.status !== 200) throw new Error(`totp/setup answered ${setup.status}`);
  const { secret } = (await setup.json()) as { secret: string };
  const confirmed = await postWithCsrf(client, '/api/account/totp/confirm', {
    code: codeAt(secret, confirmStep),
  });
  if (confirmed.status !== 200) throw new Error(`totp/confirm answered ${confirmed.status}`);
  const { recoveryCodes } = (await confirmed.json()) as { recoveryCodes: string[] };
  return { secret, recoveryCodes };
}

/**
 * `turnOnTotp` for a service on the real clock (a guide's Gatehouse, not one fixed at `base`):
 * confirmed with now's code, so the next sign-in uses `unspentCode`. Answers the secret.
 */
export async function turnOnTotpNow(client: Client): Promise<Secret> {
  const setup = await postWithCsrf(client, '/api/account/totp/setup', {});
  if (setup.status !== 200) throw new Error(`totp/setup answered ${setup.status}`);
  const secret = Secret.fromBase32(((await setup.json()) as { secret: string }).secret);
  const code = TOTP.generate({ secret, timestamp: Date.now() });
  const confirmed = await postWithCsrf(client, '/api/account/totp/confirm', { code });
  if (confirmed.status !== 200) throw new Error(`totp/confirm answered ${confirmed.status}`);
  return secret;
}

/** A code of `secret` for the step `steps` after now's: inside the window, not the one spent. */
export const unspentCode = (secret: Secret, steps = 1) =>
  TOTP.generate({ secret, timestamp: Date.now() + steps * stepMs });
