import { normalisePassword } from '../users/password.js';
import { checkNewPassword, passwordProblemMessages } from '../users/password-policy.js';
import { CliError, readNewPassword } from './prompt.js';

/** Reads a new password and refuses a short, over-long or common one with the reason. */
export async function readAcceptablePassword(
  fromStdin: boolean,
  minLength: number,
): Promise<string> {
  const password = normalisePassword(await readNewPassword(fromStdin));
  const problem = checkNewPassword(password, minLength);
  if (problem !== null) throw new CliError(passwordProblemMessages[problem](minLength));
  return password;
}
