import { loadOrCreateDevSecret } from '../../auth/bridge/dev-secret.js';
import { issueEnrolmentCode } from '../../operator/operations.js';
import { onNamedUser, type CliContext } from '../context.js';
import { CliError } from '../prompt.js';

export const help = `Usage: gatehouse users enrolment-code --email <email>

Prints a one-time enrolment code for a user without a second factor, with SECOND_FACTOR=required.
At sign-in, after their password, they enter it where the sign-in page asks for the code mailed
to them, beside the code of the authenticator app they set up: for a service without mail (where
nothing can be mailed), or for someone whose mailbox you vouch for otherwise. Check who is asking
first: with their password, this code lets them turn on two-step sign-in with an app of theirs.
The code works once, for 24 hours, and only while the account's address and password stay as
they are; a new code voids the earlier one. Recorded in the audit log as enrolment_code_issued.
Pass it on by a channel you trust: it is shown only now. Run it with the service's AUTH_SECRET
(the service checks the code under it).`;

/**
 * The service's AUTH_SECRET values: the code is kept as a digest under them, as every mailed
 * code is, so the service can check it. In development without it, the secret the service
 * keeps in DATA_DIR (as it does).
 */
function authSecretsOf(context: CliContext): readonly string[] {
  const { config } = context;
  if (config.authSecrets.length > 0) return config.authSecrets;
  if (config.env === 'production')
    throw new CliError(
      "AUTH_SECRET is not set: the service checks the code under its AUTH_SECRET, so run this with the service's configuration (AUTH_SECRET or AUTH_SECRET_FILE)",
    );
  return [loadOrCreateDevSecret(config.dataDir).secret];
}

export async function run(context: CliContext, values: { email?: string }) {
  const { user, result } = await onNamedUser(context, values.email, (ports, target) =>
    issueEnrolmentCode(ports, { ...target, authSecrets: authSecretsOf(context) }),
  );
  if (result === 'has_factor')
    throw new CliError(
      `${user.email} has a second factor already: there is nothing to enrol (if they lost it, \`users reset-second-factor\` first)`,
    );
  const until = new Date(result.expiresAt).toISOString();
  context.out(`enrolment code for ${user.email}, works once until ${until}:`);
  context.out(result.code);
  if (context.config.secondFactor.mode !== 'required')
    context.out(
      `note: SECOND_FACTOR is ${context.config.secondFactor.mode} here: sign-in asks for this code only with SECOND_FACTOR=required`,
    );
}
