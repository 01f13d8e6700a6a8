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
