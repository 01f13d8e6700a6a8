import { verifyUserEmail } from '../../operator/operations.js';
import { onNamedUser, type CliContext } from '../context.js';

export const help = `Usage: gatehouse users verify-email --email <email>

Marks the user's address as verified, as the link in a "confirm your address" mail would:
for accounts an operator made (unverified until then) when REQUIRE_VERIFIED_EMAIL=true, or
when mail is off. Sessions stay. An address verified already stays as it was.`;

export async function run(context: CliContext, values: { email?: string }) {
  const { user, result } = await onNamedUser(context, values.email, verifyUserEmail);
  context.out(
    result.changed
      ? `verified ${user.email}`
      : `${user.email} was verified already: nothing changed`,
  );
}
