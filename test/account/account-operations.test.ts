import { describe, expect, it } from 'vitest';
import type {
  AccountAction,
  AccountDeps,
  ActionInput,
  FormOperation,
  SignedIn,
} from '../../src/account/action.js';
import { recentOrTypedPassword } from '../../src/account/adapter.js';
import { CsrfRefusal } from '../../src/account/csrf-guard.js';
import {
  accountPagePaths,
  allOperations,
  servedForms,
  servedOperations,
} from '../../src/account/account-operations.js';
import { pagePathsUnder } from '../../src/account/paths.js';
import { answerFormPost, type FormPorts } from '../../src/account/self/account-page-answers.js';
import type { CurrentSession } from '../../src/auth/session/session-access.js';
import { HttpError } from '../../src/http/errors.js';
import type { User } from '../../src/users/store.js';

/*
 * One row per account operation (issue 36): its JSON route and its form in one declaration,
 * the password typed in a form a guard the adapter applies, and the page's handling of a form
 * post a function over plain inputs, tested here in process without a server.
 */

// Only what the page's handling reads: the actions here are stand-ins.
const user = { id: 'u1', email: 'ada@example.com', name: 'Ada' } as User;
const session = { claims: { sub: 'u1', sid: 's1' }, secure: false } as CurrentSession;
const signedIn: SignedIn = { session, user };
const pages = pagePathsUnder('/account');

const formOf = (name: string): FormOperation => {
  const found = allOperations.find((operation) => operation.form?.name === name);
  if (found === undefined) throw new Error(`no form ${name}`);
  return found as FormOperation;
};

/** Ports whose action runs against `deps` with the post's body; `ran` lists what ran. */
function portsWith(deps: Partial<AccountDeps>, body: Record<string, unknown>, ran: string[] = []) {
  const ports: FormPorts = {
    recent: () => Promise.resolve(),
    run: (action: AccountAction, who: SignedIn) => {
      ran.push('action');
      const input: ActionInput = {
        body,
        params: {},
        client: { ip: '203.0.113.9', device: '', origin: 'http://localhost', pages },
        signedIn: who,
        requestSessionId: () => Promise.resolve('s1'),
      };
      return action(deps as AccountDeps, input);
    },
  };
  return ports;
}

describe('the account operations table', () => {
  it('every form posts under the page and belongs to a JSON route of the same table', () => {
    const everything = { mail: true, factors: true };
    expect(servedForms(everything, pages).map(([path]) => path)).toEqual([
      '/account/profile',
      '/account/password/change',
      '/account/email/verification',
      '/account/email/change',
      '/account/sessions/revoke-others',
      '/account/sessions/:id/revoke',
      '/account/tokens',
      '/account/tokens/revoke',
      '/account/identities/unlink',
      '/account/totp/setup',
      '/account/totp/confirm',
      '/account/totp/disable',
      '/account/recovery-codes',
      '/account/passkeys/rename',
      '/account/passkeys/remove',
    ]);
    const routes = servedOperations(everything).map((operation) => operation.path);
    for (const [, operation] of servedForms(everything, pages)) {
      expect(routes).toContain(operation.path);
    }
  });

  it('mail off leaves out the mail forms, SECOND_FACTOR=off the factors', () => {
    expect(accountPagePaths(pages, { mail: false, factors: false })).toEqual([
      '/account',
      '/account/profile',
      '/account/password/change',
      '/account/sessions/revoke-others',
      '/account/sessions/:id/revoke',
      '/account/tokens',
      '/account/tokens/revoke',
      '/account/identities/unlink',
      '/account/passkeys/rename',
      '/account/passkeys/remove',
    ]);
  });

  it('no page action of its own: a form runs its JSON route’s action, behind its typed password', () => {
    for (const operation of allOperations) {
      expect(operation.action.name).not.toMatch(/WithPassword$/);
    }
  });
});

describe('a form post, over plain inputs', () => {
  /** The password form with a repeat that differs, and what ran. */
  const passwordPost = async (csrf: CsrfRefusal | undefined) => {
    const ran: string[] = [];
    const body = { newPassword: 'a', newPasswordRepeat: 'b' };
    const answer = await answerFormPost(
      { operation: formOf('password'), body, signedIn, csrf },
      portsWith({}, {}, ran),
    );
    return { ran, answer };
  };

  it('a stale CSRF token: the form again (403), nothing checked or run', async () => {
    const { ran, answer } = await passwordPost(new CsrfRefusal('token', undefined));
    expect(ran).toEqual([]);
    expect(answer).toMatchObject({ to: 'page', status: 403, said: { sent: { form: 'password' } } });
  });

  it('the repeated new password differs: 422 with both fields marked, nothing run', async () => {
    const { ran, answer } = await passwordPost(undefined);
    expect(ran).toEqual([]);
    expect(answer).toMatchObject({
      to: 'page',
      status: 422,
      said: { sent: { form: 'password', invalid: ['newPassword', 'newPasswordRepeat'] } },
    });
  });

  it('the address form without its password: 422 on currentPassword, the address kept, no mail', async () => {
    const body = { email: 'new@example.com' };
    const answer = await answerFormPost(
      { operation: formOf('email'), body, signedIn, csrf: undefined },
      portsWith({}, body),
    );
    expect(answer).toEqual({
      to: 'page',
      status: 422,
      headers: {},
      said: {
        notice: { tone: 'error', text: 'Enter your current password to change your address.' },
        sent: {
          form: 'email',
          values: { email: 'new@example.com' },
          invalid: ['currentPassword'],
        },
      },
    });
  });

  it('a resent verification of a verified address is done as `verified`', async () => {
    const answer = await answerFormPost(
      { operation: formOf('verification'), body: {}, signedIn, csrf: undefined },
      {
        ...portsWith({}, {}),
        run: () => Promise.resolve({ body: { status: 'already_verified' } }),
      },
    );
    expect(answer).toEqual({ to: 'done', done: 'verified' });
  });

  it('new recovery codes are shown on the page itself (200), never redirected to', async () => {
    const answer = await answerFormPost(
      { operation: formOf('recovery_codes'), body: {}, signedIn, csrf: undefined },
      { ...portsWith({}, {}), run: () => Promise.resolve({ body: { recoveryCodes: ['a-b'] } }) },
    );
    expect(answer).toMatchObject({
      to: 'page',
      status: 200,
      said: { shown: { secondFactor: { freshCodes: ['a-b'] } } },
    });
  });

  it('a new access token is shown on the page itself (200), never redirected to', async () => {
    const made = { id: 'pat_1', name: 'ci', token: 'gat_x', createdAt: '', expiresAt: null };
    const answer = await answerFormPost(
      { operation: formOf('access-token-create'), body: {}, signedIn, csrf: undefined },
      { ...portsWith({}, {}), run: () => Promise.resolve({ body: made, status: 201 }) },
    );
    expect(answer).toMatchObject({
      to: 'page',
      status: 200,
      said: { shown: { accessToken: { name: 'ci', token: 'gat_x', expiresAt: null } } },
    });
  });

  it('a session that ended meanwhile goes to the sign-in page', async () => {
    const answer = await answerFormPost(
      { operation: formOf('profile'), body: { name: 'Ada' }, signedIn, csrf: undefined },
      { ...portsWith({}, {}), run: () => Promise.reject(new HttpError('unauthenticated')) },
    );
    expect(answer).toEqual({ to: 'signin' });
  });
});

describe('the password typed in a passkey removal', () => {
  const deps = (provedAt: number | null, now: number) =>
    ({
      recentUntil: () => Promise.resolve(provedAt === null ? null : provedAt + 600_000),
      now: () => now,
    }) as unknown as AccountDeps;
  const input = { body: {}, signedIn } as unknown as ActionInput;

  it('a recent session needs none: the action runs', async () => {
    const ran: string[] = [];
    const action: AccountAction = () => {
      ran.push('removed');
      return Promise.resolve({ body: { status: 'removed' } });
    };
    await recentOrTypedPassword(deps(1_000, 2_000), input, action);
    expect(ran).toEqual(['removed']);
  });

  it('an old session without a password: 401 reauthentication_required, nothing removed', async () => {
    const ran: string[] = [];
    const action: AccountAction = () => {
      ran.push('removed');
      return Promise.resolve({ body: {} });
    };
    await expect(recentOrTypedPassword(deps(0, 10_000_000), input, action)).rejects.toMatchObject({
      code: 'reauthentication_required',
    });
    expect(ran).toEqual([]);
  });
});
