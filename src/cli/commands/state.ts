import { findUserOrThrow, requireEmail, type CliContext } from '../context.js';

export const disableHelp = `Usage: gatehouse users disable --email <email>

Refuses sign-in for the user and ends every session of that user.`;

export const enableHelp = `Usage: gatehouse users enable --email <email>

Allows a disabled user to sign in again.`;

export const removeHelp = `Usage: gatehouse users remove --email <email>

Deletes the user and every session of that user. This cannot be undone.`;

export const revokeHelp = `Usage: gatehouse users revoke-sessions --email <email>

Ends every session of the user now; the user can sign in again.`;

export async function disable(context: CliContext, values: { email?: string }) {
  const user = await findUserOrThrow(context, requireEmail(values.email));
  await context.services.users.setDisabled(user.id, true);
  context.out(`disabled ${user.email}; its sessions have ended`);
}

export async function enable(context: CliContext, values: { email?: string }) {
  const user = await findUserOrThrow(context, requireEmail(values.email));
  await context.services.users.setDisabled(user.id, false);
  context.out(`enabled ${user.email}`);
}

export async function remove(context: CliContext, values: { email?: string }) {
  const user = await findUserOrThrow(context, requireEmail(values.email));
  await context.services.users.remove(user.id);
  context.out(`removed ${user.email}`);
}

export async function revokeSessions(context: CliContext, values: { email?: string }) {
  const user = await findUserOrThrow(context, requireEmail(values.email));
  const count = await context.services.sessions.revokeAllForUser(user.id, Date.now());
  context.out(`ended ${count} session${count === 1 ? '' : 's'} of ${user.email}`);
}
