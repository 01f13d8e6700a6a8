import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { createGuards } from '../../src/account/guards.js';
import type { SignedIn } from '../../src/account/action.js';
import type { CurrentSession } from '../../src/auth/session/session-access.js';
import { StoreUnavailableError } from '../../src/auth/request/request-context.js';
import { HttpError } from '../../src/http/errors.js';
import type { User } from '../../src/users/store.js';

const user: User = {
  id: 'u1',
  email: 'ada@example.com',
  name: 'Ada',
  passwordHash: 'x',
  disabled: false,
  credentialVersion: 0,
  createdAt: 0,
  updatedAt: 0,
};
const session: CurrentSession = {
  claims: { sub: 'u1', sid: 's1', auth_time: 0, email: user.email, name: user.name },
  secure: false,
};
const request = {} as FastifyRequest;

function guardsWith(options: {
  provedAt?: number | null;
  now?: number;
  current?: () => Promise<CurrentSession | null>;
  user?: User | null;
}) {
  return createGuards({
    sessions: { current: options.current ?? (() => Promise.resolve(session)) },
    users: { findById: () => Promise.resolve(options.user === undefined ? user : options.user) },
    store: { provedAt: () => Promise.resolve(options.provedAt ?? null) },
    reauthMaxAgeSeconds: 600,
    now: () => options.now ?? 0,
  });
}

const codeOf = async (work: Promise<unknown>) => {
  try {
    await work;
    return 'passed';
  } catch (error) {
    return error instanceof HttpError ? error.code : String(error);
  }
};

describe('the (session) and (recent) guards', () => {
  it.each([
    ['just proved', 1_000_000, 1_000_000, 'passed'],
    ['proved 599.999 s ago', 1_000_000, 1_599_999, 'passed'],
    ['proved exactly REAUTH_MAX_AGE ago', 1_000_000, 1_600_000, 'reauthentication_required'],
    ['proved long ago', 0, 10_000_000, 'reauthentication_required'],
    ['a session that is over', null, 0, 'unauthenticated'],
  ])('recent: %s → %s', async (_name, provedAt, now, expected) => {
    const signedIn: SignedIn = { session, user };
    expect(await codeOf(guardsWith({ provedAt, now }).recent(signedIn))).toBe(expected);
  });

  it.each([
    ['no session', { current: () => Promise.resolve(null) }, 'unauthenticated'],
    ['a user gone', { user: null }, 'unauthenticated'],
    ['a disabled user', { user: { ...user, disabled: true } }, 'unauthenticated'],
    [
      'a store that does not answer',
      { current: () => Promise.reject(new StoreUnavailableError(new Error('down'))) },
      'unavailable',
    ],
    ['a live session', {}, 'passed'],
  ])('session: %s → %s', async (_name, options, expected) => {
    expect(await codeOf(guardsWith(options).session(request))).toBe(expected);
  });
});
