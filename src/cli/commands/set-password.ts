import { findUserOrThrow, requireEmail, type CliContext } from '../context.js';
import { readAcceptablePassword } from '../new-password.js';
import { recordOperatorEvent } from './state.js';

export const help = `Usage: gatehouse users set-password --email <email> [--password-stdin]

Sets a new password (hidden prompt, or standard input with --password-stdin), ends
every session of that user and lifts a sign-in lock on the email.`;

export async function run(
  context: CliContext,
  values: { email?: string; 'password-stdin'?: boolean },
) {
  const user = await findUserOrThrow(context, requireEmail(values.email));
  const password = await readAcceptablePassword(
    values['password-stdin'] === true,
    context.config.passwordMinLength,
  );
  await context.services.users.setPasswordHash(
    user.id,
    await context.services.hasher.hash(password),
  );
  await context.services.throttle.unlockEmail(user.email);
  await recordOperatorEvent(context, user.id, 'password_changed', { reason: 'set-password' });
  context.out(`password set for ${user.email}; its sessions have ended`);
}
