import { normalisePassword } from '../users/password.js';
import { checkNewPassword, passwordProblemMessages } from '../users/password-policy.js';
import { CliError, readNewPassword } from './prompt.js';

/**
 * Reads a new password and refuses a short, over-long or common one with the reason: at the
 * prompt, right after the first entry, before "Repeat password" is asked.
 */
export async function readAcceptablePassword(
  fromStdin: boolean,
  minLength: number,
): Promise<string> {
  const refuseUnacceptable = (raw: string) => {
    const problem = checkNewPassword(normalisePassword(raw), minLength);
    if (problem !== null) throw new CliError(passwordProblemMessages[problem](minLength));
  };
  const password = normalisePassword(await readNewPassword(fromStdin, refuseUnacceptable));
  refuseUnacceptable(password);
  return password;
}
