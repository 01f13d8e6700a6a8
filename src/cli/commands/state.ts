import {
  disableUser,
  enableUser,
  removeUser,
  renameUser,
  revokeUserSessionsNow,
  setUserEmail,
  unlockEmail,
} from '../../operator/operations.js';
import { cliActor, onNamedUser, operatorPorts, requireEmail, type CliContext } from '../context.js';
import { CliError } from '../prompt.js';

export const disableHelp = `Usage: gatehouse users disable --email <email>

Refuses sign-in for the user and ends every session of that user.`;

export const enableHelp = `Usage: gatehouse users enable --email <email>

Allows a disabled user to sign in again, and lifts a sign-in lock on the email. "This wasn't me"
links mailed before stop working: they may have reached whoever had the account.`;

export const unlockHelp = `Usage: gatehouse users unlock --email <email>

Lifts the sign-in lock that failed attempts put on the email (it would also end by itself
after THROTTLE_LOCK_SECONDS). Works whether or not a user has that email. When no lock is in
force it says "no lock on <email>" and exits 0 all the same: the email may sign in.`;

export const removeHelp = `Usage: gatehouse users remove --email <email>

Deletes the user and every session of that user. This cannot be undone.`;

export const revokeHelp = `Usage: gatehouse users revoke-sessions --email <email>

Ends every session of the user now; the user can sign in again.`;

export async function disable(context: CliContext, values: { email?: string }) {
  const { user } = await onNamedUser(context, values.email, disableUser);
  context.out(`disabled ${user.email}; its sessions have ended`);
}

export async function enable(context: CliContext, values: { email?: string }) {
  const { user } = await onNamedUser(context, values.email, enableUser);
  context.out(`enabled ${user.email}`);
}

export async function unlock(context: CliContext, values: { email?: string }) {
  const email = requireEmail(values.email);
  const { lockedUntil } = await unlockEmail(operatorPorts(context), { email, actor: cliActor });
  context.out(
    lockedUntil === null
      ? `no lock on ${email}: it may sign in already`
      : `unlocked ${email}: it may sign in again at once`,
  );
}

export async function remove(context: CliContext, values: { email?: string }) {
  const { user } = await onNamedUser(context, values.email, removeUser);
  context.out(`removed ${user.email}`);
}

export async function revokeSessions(context: CliContext, values: { email?: string }) {
  const { user, result } = await onNamedUser(context, values.email, revokeUserSessionsNow);
  const count = result.revoked;
  context.out(`ended ${count} session${count === 1 ? '' : 's'} of ${user.email}`);
}

export const renameHelp = `Usage: gatehouse users rename --email <email> --name <name>

Changes the user's display name. Sessions stay.`;

export const setEmailHelp = `Usage: gatehouse users set-email --email <email> --new-email <email> [--verified]

Moves the user to another email (normalised as \`users add\` does; it must not belong to another
user) and ends every session of that user. The new address is unverified unless --verified says
you know it is theirs (with REQUIRE_VERIFIED_EMAIL an unverified one cannot sign in until the
person confirms it; \`users verify-email\` marks it later).`;

export async function rename(context: CliContext, values: { email?: string; name?: string }) {
  const { user } = await onNamedUser(context, values.email, (ports, target) => {
    const name = (values.name ?? '').trim();
    if (name.length === 0) throw new CliError('--name is required', 2);
    if (name.length > 200) throw new CliError('--name must be at most 200 characters', 2);
    return renameUser(ports, { ...target, name });
  });
  context.out(`renamed ${user.email}`);
}

export async function setEmail(
  context: CliContext,
  values: { email?: string; 'new-email'?: string; verified?: boolean },
) {
  // The user first, as every command: a wrong --new-email is said only for one that exists.
  let newEmail = '';
  const { user, result } = await onNamedUser(context, values.email, (ports, target) => {
    newEmail = requireEmail(values['new-email'], '--new-email');
    return setUserEmail(ports, { ...target, email: newEmail, verified: values.verified === true });
  });
  if (result === 'taken') throw new CliError(`a user with email ${newEmail} already exists`);
  const verified = values.verified === true ? ', address verified' : '';
  context.out(`moved ${user.email} to ${newEmail}${verified}; its sessions have ended`);
}
