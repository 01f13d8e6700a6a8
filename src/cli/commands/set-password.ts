import { setUserPassword } from '../../operator/operations.js';
import { onNamedUser, type CliContext } from '../context.js';
import { readAcceptablePassword } from '../new-password.js';

export const help = `Usage: gatehouse users set-password --email <email> [--password-stdin]

Sets a new password (hidden prompt, or standard input with --password-stdin), ends
every session of that user and lifts a sign-in lock on the email.`;

export async function run(
  context: CliContext,
  values: { email?: string; 'password-stdin'?: boolean },
) {
  // Looked up first: no password is asked for a user who does not exist.
  const { user } = await onNamedUser(context, values.email, async (ports, target) => {
    const password = await readAcceptablePassword(
      values['password-stdin'] === true,
      context.config.passwordMinLength,
    );
    const passwordHash = await context.services.hasher.hash(password);
    return setUserPassword(ports, { ...target, passwordHash });
  });
  context.out(`password set for ${user.email}; its sessions have ended`);
}
