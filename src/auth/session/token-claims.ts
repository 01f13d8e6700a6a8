/** Auth.js's (jose's) allowance for clock skew when it checks `exp`. */
export const expClockToleranceSeconds = 15;

/** The claims every Gatehouse session token carries beyond Auth.js's own. */
export interface GatehouseClaims extends Record<string, unknown> {
  sub: string;
  email: string;
  name: string;
  /** Session id: a row in the store; revoked or unknown reads as no session. */
  sid: string;
  /** Sign-in time, seconds since the epoch; the absolute cap counts from here. */
  auth_time: number;
}

/** A token's Gatehouse claims, or null when it is not a Gatehouse session's. */
export function readClaims(token: Record<string, unknown> | null): GatehouseClaims | null {
  if (token === null) return null;
  const { sub, email, name, sid, auth_time: authTime } = token;
  if (typeof sub !== 'string' || typeof sid !== 'string' || typeof authTime !== 'number') {
    return null;
  }
  return {
    sub,
    sid,
    auth_time: authTime,
    email: typeof email === 'string' ? email : '',
    name: typeof name === 'string' ? name : '',
  };
}

/** The session answer's body: exactly `{user: {id, email, name}, expires}`, capped. */
export interface SessionBody {
  user: { id: string; email: string; name: string };
  expires: string;
}
