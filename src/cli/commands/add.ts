import { addUser } from '../../operator/operations.js';
import { cliActor, operatorPorts, requireEmail, type CliContext } from '../context.js';
import { readAcceptablePassword } from '../new-password.js';
import { CliError } from '../prompt.js';

export const help = `Usage: gatehouse users add --email <email> [--name <name>] [--password-stdin] [--verified]

Creates a user. The password is asked for twice at a hidden prompt, or read from
standard input with --password-stdin. It must be at least PASSWORD_MIN_LENGTH (12)
characters and not a commonly used password. The address is unverified unless --verified
says the operator knows it is the user's (REQUIRE_VERIFIED_EMAIL=true refuses sign-in to
an unverified one; \`users verify-email\` marks it later).`;

export async function run(
  context: CliContext,
  values: { email?: string; name?: string; 'password-stdin'?: boolean; verified?: boolean },
) {
  const email = requireEmail(values.email);
  const name = (values.name ?? email.split('@')[0] ?? '').trim();
  if (name.length > 200) throw new CliError('--name must be at most 200 characters', 2);
  // Refused before the password is asked for; the operation refuses a race all the same.
  if ((await context.services.users.findByEmail(email)) !== null) {
    throw new CliError(`a user with email ${email} already exists`);
  }
  const password = await readAcceptablePassword(
    values['password-stdin'] === true,
    context.config.passwordMinLength,
  );
  const user = await addUser(operatorPorts(context), {
    email,
    name,
    passwordHash: await context.services.hasher.hash(password),
    verified: values.verified === true,
    actor: cliActor,
  });
  if (user === 'taken') throw new CliError(`a user with email ${email} already exists`);
  const verified = values.verified === true ? ', address verified' : '';
  context.out(`added ${user.email} (id ${user.id})${verified}`);
}
