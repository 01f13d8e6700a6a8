import { readNewPassword } from '../users/password.js';
import { checkNewPassword, passwordProblemMessages } from '../users/password-policy.js';
import { CliError, readNewPassword as readTypedPassword } from './prompt.js';

/**
 * Reads a new password and refuses a short, over-long or common one with the reason: at the
 * prompt, right after the first entry, before "Repeat password" is asked.
 */
export async function readAcceptablePassword(
  fromStdin: boolean,
  minLength: number,
): Promise<string> {
  // Bounded before NFKC (src/users/password.ts), as the routes are.
  const accepted = (raw: string): string => {
    const read = readNewPassword(raw);
    const problem = 'problem' in read ? read.problem : checkNewPassword(read.normalised, minLength);
    if (problem === null && 'normalised' in read) return read.normalised;
    throw new CliError(passwordProblemMessages[problem ?? 'too_long'](minLength));
  };
  return accepted(await readTypedPassword(fromStdin, (raw) => void accepted(raw)));
}
