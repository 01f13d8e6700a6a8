import { resetSecondFactor } from '../../operator/operations.js';
import {
  cliActor,
  findUserOrThrow,
  operatorPorts,
  requireEmail,
  type CliContext,
} from '../context.js';
import { CliError } from '../prompt.js';

export const help = `Usage: gatehouse users reset-second-factor --email <email>

Turns off the user's two-step sign-in (TOTP) and voids their recovery codes, for someone who
lost both their authenticator app and their codes. Check who is asking first: this lowers the
account to its password. Recorded in the user's events as totp_disabled. Sessions stay.`;

export async function run(context: CliContext, values: { email?: string }) {
  const user = await findUserOrThrow(context, requireEmail(values.email));
  const result = await resetSecondFactor(operatorPorts(context), {
    userId: user.id,
    actor: cliActor,
  });
  if (result === 'missing') throw new CliError(`no user with email ${user.email}`);
  context.out(
    result.changed
      ? `turned off two-step sign-in of ${user.email}; its recovery codes are void`
      : `${user.email} had no two-step sign-in: nothing changed`,
  );
}
