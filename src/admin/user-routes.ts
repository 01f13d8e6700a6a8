import * as z from 'zod/mini';
import { displayName } from '../account/display-name.js';
import { boundedString, fieldsOf } from '../account/request-body.js';
import { HttpError, invalidField } from '../http/errors.js';
import {
  disableUser,
  enableUser,
  findUsers,
  inviteUser,
  issueEnrolmentCode,
  removeUser,
  renameUser,
  resetSecondFactor as resetUserSecondFactor,
  setUserEmail,
  showUser,
  unlockUser,
  verifyUserEmail,
  type UserSummary,
} from '../operator/operations.js';
import { emailRawMaxLength, readEmail } from '../users/email.js';
import { idParam, limitParam, notFound, ok } from './admin-call.js';
import type { AdminCall, AdminHandler } from './admin-call.js';

/** The user after an operation, as `GET /api/admin/users/{id}` shows it; 404 once gone. */
async function userAnswer(call: AdminCall, userId: string) {
  const user = await showUser(call.ports, { userId });
  if (user === 'missing') throw notFound('user');
  return ok(user);
}

/** Runs `operation` on the user the path names: 404 when it answers 'missing', else the user after. */
function onUser(operation: (call: AdminCall, userId: string) => Promise<unknown>): AdminHandler {
  return async (call) => {
    const userId = idParam(call, 'user');
    if ((await operation(call, userId)) === 'missing') throw notFound('user');
    return userAnswer(call, userId);
  };
}

const email = z.pipe(
  boundedString(emailRawMaxLength),
  z.transform((raw, ctx) => {
    const read = readEmail(raw);
    if (read === null) ctx.issues.push({ code: 'custom', message: 'not an email', input: raw });
    return read ?? '';
  }),
);

const emailFields = z.object({ email, verified: z.optional(z.boolean()) });
const nameFields = z.object({ name: displayName });
const inviteFields = z.object({
  email,
  name: z.optional(z.union([displayName, z.literal('')])),
  printLink: z.optional(z.boolean()),
});

export const listUsers: AdminHandler = async (call) => {
  const query = call.query.query;
  if (query !== undefined && query.length > 200) throw invalidField('query');
  const page = await findUsers(call.ports, {
    limit: limitParam(call, 50, 500),
    ...(query !== undefined && { query }),
    ...(call.query.cursor !== undefined &&
      call.query.cursor !== '' && { cursor: call.query.cursor }),
  });
  if (page === 'bad-cursor') throw invalidField('cursor', 'cursor is not one a page gave.');
  return ok(page satisfies { users: UserSummary[]; nextCursor: string | null });
};

export const getUser: AdminHandler = (call) => userAnswer(call, idParam(call, 'user'));

export const invite: AdminHandler = async (call) => {
  const fields = fieldsOf(inviteFields, call.body);
  const { ports } = call;
  if (ports.origin === undefined)
    throw new HttpError(
      'conflict',
      {},
      "AUTH_URL is not set: an invitation link is built on the service's public origin.",
    );
  // The link is answered only where it cannot be mailed, and only when asked for.
  const mailed = ports.mail !== undefined && ports.mail.enabled;
  if (!mailed && fields.printLink !== true)
    throw invalidField(
      'printLink',
      'Mail is off: the link cannot be mailed. Send printLink: true to have it answered, and pass it on yourself.',
      'mail_off',
    );
  const issued = await inviteUser(
    { ...ports, mail: mailed ? ports.mail : undefined },
    {
      email: fields.email,
      name: fields.name ?? '',
      origin: ports.origin,
      accountPagesPath: ports.accountPagesPath,
      ttlSeconds: ports.inviteTtlSeconds,
      actor: call.actor,
    },
  );
  if (issued.outcome === 'taken')
    throw new HttpError('conflict', {}, 'A user with this email exists already.');
  return ok(
    {
      id: issued.id,
      expiresAt: new Date(issued.expiresAt).toISOString(),
      ...(!mailed && { link: issued.link }),
    },
    201,
  );
};

export const disable = onUser((call, userId) =>
  disableUser(call.ports, { userId, actor: call.actor }),
);
export const enable = onUser((call, userId) =>
  enableUser(call.ports, { userId, actor: call.actor }),
);
export const unlock = onUser((call, userId) =>
  unlockUser(call.ports, { userId, actor: call.actor }),
);
export const verifyEmail = onUser((call, userId) =>
  verifyUserEmail(call.ports, { userId, actor: call.actor }),
);
const resetFields = z.object({ passkeys: z.optional(z.boolean()) });

/**
 * Turns TOTP off and voids the recovery codes (as `users reset-second-factor`), with
 * `{"passkeys": true}` also removes the passkeys; recorded with the token's label.
 */
export const resetSecondFactor = onUser((call, userId) => {
  const { passkeys } = fieldsOf(resetFields, call.body);
  return resetUserSecondFactor(call.ports, {
    userId,
    actor: call.actor,
    methods: passkeys === true ? ['passkeys'] : [],
  });
});
/**
 * A one-time enrolment code (as `users enrolment-code`): 201 `{code, expiresAt}`, the code shown
 * only in this answer; 409 when the account has a second factor already.
 */
export const enrolmentCode: AdminHandler = async (call) => {
  const userId = idParam(call, 'user');
  const issued = await issueEnrolmentCode(call.ports, { userId, actor: call.actor });
  if (issued === 'missing') throw notFound('user');
  if (issued === 'has_factor')
    throw new HttpError(
      'conflict',
      {},
      'The user has a second factor already: there is nothing to enrol (reset it first).',
    );
  return ok({ code: issued.code, expiresAt: new Date(issued.expiresAt).toISOString() }, 201);
};

export const rename = onUser((call, userId) => {
  const { name } = fieldsOf(nameFields, call.body);
  return renameUser(call.ports, { userId, name, actor: call.actor });
});

export const setEmail = onUser(async (call, userId) => {
  const fields = fieldsOf(emailFields, call.body);
  const result = await setUserEmail(call.ports, {
    userId,
    email: fields.email,
    verified: fields.verified === true,
    actor: call.actor,
  });
  if (result === 'taken')
    throw new HttpError('conflict', {}, 'Another user has this email.', { field: 'email' });
  return result;
});

export const remove: AdminHandler = async (call) => {
  const userId = idParam(call, 'user');
  const removed = await removeUser(call.ports, { userId, actor: call.actor });
  if (removed === 'missing') throw notFound('user');
  return { status: 204 };
};
