import { createJweCodec } from '../../src/auth/session/jwe-codec.js';
import type { SessionStore } from '../../src/sessions/session-store.js';
import type { TestServer } from './server.js';

const codec = createJweCodec();

/**
 * A session row and a token naming it, sealed as Auth.js seals one (no sign-in, so no hash and
 * no throttle charge): for tests that need many sessions or tokens made with other secrets.
 */
export async function mintSession(
  server: TestServer,
  user: { id: string; email: string; name: string },
  options: { secret: string; salt?: string; at?: number; maxAgeSeconds?: number },
): Promise<{ sid: string; token: string }> {
  const at = options.at ?? Date.now();
  const current = await server.services.users.findById(user.id);
  const sid =
    current === null
      ? null
      : await server.services.sessions.create(
          { userId: user.id, credentialVersion: current.credentialVersion },
          at,
        );
  if (sid === null) throw new Error(`no session for user ${user.id}`);
  const token = codec.encode({
    token: {
      sub: user.id,
      email: user.email,
      name: user.name,
      sid,
      auth_time: Math.floor(at / 1000),
    },
    secret: options.secret,
    salt: options.salt ?? 'authjs.session-token',
    maxAge: options.maxAgeSeconds ?? 30 * 86400,
  });
  return { sid, token };
}

/**
 * The session store with `before(sid)` run ahead of every liveness check, both the promise
 * (`findActive`) and the same-turn one SQLite's session read uses (`findActiveNow`): a test
 * counting or failing checks must see each, whichever way the read asks. `before` may throw.
 */
export function aroundSessionChecks(
  sessions: SessionStore,
  before: (sessionId: string) => void,
): SessionStore {
  const now = sessions.findActiveNow;
  return {
    ...sessions,
    findActive: async (sid) => {
      before(sid);
      return sessions.findActive(sid);
    },
    ...(now !== undefined && {
      findActiveNow: (sid: string) => {
        before(sid);
        return now(sid);
      },
    }),
  };
}
