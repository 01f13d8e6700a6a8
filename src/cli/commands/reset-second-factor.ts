import { resetSecondFactor } from '../../operator/operations.js';
import { onNamedUser, type CliContext } from '../context.js';

export const help = `Usage: gatehouse users reset-second-factor --email <email> [--passkeys]

Turns off the user's two-step sign-in (TOTP) and voids their recovery codes, for someone who
lost both their authenticator app and their codes. Check who is asking first: this lowers the
account to its password. Recorded in the user's events as totp_disabled. Sessions stay.

  --passkeys  also remove every passkey of the account (each recorded as passkey_removed), for
              someone who lost their passkey: with SECOND_FACTOR=required an account whose
              second factor was a passkey cannot sign in otherwise. Their next sign-in with
              the password then sets up an authenticator app.`;

export async function run(context: CliContext, values: { email?: string; passkeys?: boolean }) {
  const passkeys = values.passkeys === true;
  const { user, result } = await onNamedUser(context, values.email, (ports, target) =>
    resetSecondFactor(ports, { ...target, methods: passkeys ? ['passkeys'] : [] }),
  );
  const what = passkeys ? 'two-step sign-in or passkeys' : 'two-step sign-in';
  context.out(
    result.changed
      ? passkeys
        ? `turned off two-step sign-in of ${user.email} and removed its passkeys; its recovery codes are void`
        : `turned off two-step sign-in of ${user.email}; its recovery codes are void`
      : `${user.email} had no ${what}: nothing changed`,
  );
}
