import * as z from 'zod/mini';
import { HttpError } from '../../http/errors.js';
import {
  accessTokensPerUserMax,
  createAccessToken,
  listAccessTokens,
  revokeAccessToken,
} from '../../users/access-tokens.js';
import { answer, type AccountAction, type AccountOperation } from '../action.js';
import { recentOrTypedPassword } from '../adapter.js';
import { displayName } from '../display-name.js';
import { record } from '../model/events.js';
import { recordWithNotice } from '../model/security-notice.js';
import { boundedString, fieldsOf } from '../request-body.js';

/*
 * `/api/account/tokens`: personal access tokens for scripts (adoption spec §4). Made with a
 * recent proof of the password, shown once, listed with their last use, revoked one by one;
 * a lock, a disable, a password change and "sign out everywhere else" end them all
 * (src/users/held-credentials.ts). They open `GET /api/auth/token` and introspection only,
 * never these routes (which read the session cookie alone).
 */

const dayMs = 86_400_000;
export const accessTokenDaysMax = 366;

/** A whole number of days, from a form's text or a JSON number; blank: no expiry. */
const days = z.optional(
  z.pipe(
    z.union([z.number(), z.string().check(z.regex(/^\s*\d{0,4}\s*$/))]),
    z.transform((value) =>
      typeof value === 'string' && value.trim() === '' ? undefined : Number(value),
    ),
  ),
);
const createFields = z.object({ name: displayName, expiresInDays: days });

/** `GET /api/account/tokens`: `{tokens: [{id, name, createdAt, expiresAt, lastUsedAt}]}`, newest first. */
export const listOwnAccessTokens: AccountAction = async (deps, { signedIn }) =>
  answer({ tokens: await listAccessTokens(deps.db, signedIn.user.id, deps.now()) });

/**
 * `POST /api/account/tokens` (recent) `{name, expiresInDays?}`: 201 `{id, name, token,
 * createdAt, expiresAt}`; the token is in no other answer. 409 `conflict` past
 * `accessTokensPerUserMax` live tokens.
 */
export const createOwnAccessToken: AccountAction = async (deps, { signedIn, body, client }) => {
  const { name, expiresInDays } = fieldsOf(createFields, body);
  if (
    expiresInDays !== undefined &&
    (!Number.isInteger(expiresInDays) || expiresInDays < 1 || expiresInDays > accessTokenDaysMax)
  )
    throw new HttpError(
      'invalid_field',
      {},
      `expiresInDays must be a whole number of days from 1 to ${accessTokenDaysMax}, or left out for a token that does not expire.`,
      { field: 'expiresInDays' },
    );
  const at = deps.now();
  const expiresAt = expiresInDays === undefined ? null : at + expiresInDays * dayMs;
  const made = await deps.db.transaction().execute(async (trx) => {
    const token = await createAccessToken(trx, {
      userId: signedIn.user.id,
      name,
      expiresAt,
      at,
    });
    // Its owner is told, with the "this wasn't me" link: a token made by someone holding the
    // session and the password would otherwise act for them unseen.
    if (token !== null)
      await recordWithNotice(trx, deps.mail, signedIn.user, client, {
        type: 'access_token_created',
        detail: { token: token.id, name },
        kind: 'access-token-created-notice',
        values: { tokenName: name },
        now: at,
      });
    return token;
  });
  if (made === null)
    throw new HttpError(
      'conflict',
      {},
      `This account holds ${accessTokensPerUserMax} access tokens, the most it may: revoke one first.`,
    );
  return {
    status: 201,
    body: {
      id: made.id,
      name,
      token: made.token,
      createdAt: new Date(at).toISOString(),
      expiresAt: expiresAt === null ? null : new Date(expiresAt).toISOString(),
    },
  };
};

const revokeFields = z.object({ id: boundedString(64) });

/** `POST /api/account/tokens/{id}/revoke`: 204; 404 for an id that is no live token of this user's. */
export const revokeOwnAccessToken: AccountAction = async (
  deps,
  { signedIn, body, params, client },
) => {
  const { id } = fieldsOf(revokeFields, { id: params.id ?? body.id });
  const ended = await deps.db.transaction().execute(async (trx) => {
    const done = await revokeAccessToken(trx, { userId: signedIn.user.id, id, at: deps.now() });
    if (done)
      await record(trx, {
        ...client,
        userId: signedIn.user.id,
        type: 'access_token_revoked',
        detail: { token: id },
      });
    return done;
  });
  if (!ended) throw new HttpError('not_found', {}, 'No such access token.');
  return { body: null, status: 204 };
};

/** A token just made, as the account page shows it this once. */
const madeToken = (made: unknown) => {
  const { name, token, expiresAt } = made as {
    name: string;
    token: string;
    expiresAt: string | null;
  };
  return { accessToken: { name, token, expiresAt } };
};

/**
 * The access tokens' rows of the account's operations table (src/account/account-operations.ts).
 * On the account page, the create form asks for the current password unless the session is
 * recent, and its answer is the page showing the token; the revoke form names it in an `id` field.
 */
export const accessTokenOperations: readonly AccountOperation[] = [
  { path: '/tokens', method: 'GET', guard: 'session', action: listOwnAccessTokens },
  {
    path: '/tokens',
    method: 'POST',
    guard: 'recent',
    action: createOwnAccessToken,
    status: 201,
    form: {
      name: 'access-token-create',
      keep: ['name', 'expiresInDays'],
      typedPassword: recentOrTypedPassword,
      shows: madeToken,
    },
  },
  {
    path: '/tokens/:id/revoke',
    method: 'POST',
    guard: 'session',
    action: revokeOwnAccessToken,
    form: { name: 'access-token-revoke', path: '/tokens/revoke', keep: ['id'] },
  },
];
