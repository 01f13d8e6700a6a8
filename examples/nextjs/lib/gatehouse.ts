import { headers } from 'next/headers';

const gatehouseUrl = process.env.GATEHOUSE_URL ?? 'http://127.0.0.1:3000';

export interface GatehouseSession {
  user: { id: string; email: string; name: string | null };
  expires: string;
}

/**
 * Asks Gatehouse whose session the request's cookie holds. Unlike `auth()`, which decodes the
 * cookie here, the answer is null as soon as the session was signed out or revoked, or the user
 * disabled or removed. One loopback round trip.
 */
export async function sessionFromGatehouse(): Promise<GatehouseSession | null> {
  const cookie = (await headers()).get('cookie') ?? '';
  const response = await fetch(`${gatehouseUrl}/api/auth/session`, {
    headers: { cookie },
    cache: 'no-store',
  });
  if (!response.ok) throw new Error(`Gatehouse answered the session read with ${response.status}`);
  return (await response.json()) as GatehouseSession | null;
}

/**
 * A token for the request's session, from Gatehouse's `GET /api/auth/token`, to call another
 * backend with (`Authorization: Bearer`): a JWT Gatehouse signs, valid for TOKEN_TTL (5 minutes
 * by default), which that backend checks with Gatehouse's public keys. Null without a session.
 */
export async function tokenFromGatehouse(): Promise<string | null> {
  const cookie = (await headers()).get('cookie') ?? '';
  const response = await fetch(`${gatehouseUrl}/api/auth/token`, {
    headers: { cookie },
    cache: 'no-store',
  });
  if (response.status === 401) return null;
  if (!response.ok) throw new Error(`Gatehouse answered the token request with ${response.status}`);
  return ((await response.json()) as { token: string }).token;
}
