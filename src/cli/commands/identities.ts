import { listIdentitiesOfUser, removeIdentityOfUser } from '../../operator/operations.js';
import { createMail, mailSettingsOf } from '../../mail/start.js';
import { CliError } from '../prompt.js';
import { onNamedUser, type CliContext } from '../context.js';

export const listHelp = `Usage: gatehouse users identities --email <email> [--json]

Lists the user's identities at identity providers (Google, GitHub, OpenID Connect…): each
one's id, the provider, the address it gave when it was linked, and when it was linked and
last signed in.`;

export const removeHelp = `Usage: gatehouse users remove-identity --email <email> --id <identity id>

Removes one of the user's identities (the id from \`gatehouse users identities\`): it no longer
signs in to this account, and a sign-in with it is treated as a new person's. Recorded as
identity_unlinked with the CLI as actor. It may be the account's last way in: the person then
signs in after a password reset.`;

const day = (ms: number | null) => (ms === null ? 'never' : new Date(ms).toISOString());

export async function list(context: CliContext, values: { email?: string; json?: boolean }) {
  const { result } = await onNamedUser(context, values.email, (ports, target) =>
    listIdentitiesOfUser(ports, target),
  );
  if (values.json === true) {
    context.out(JSON.stringify(result));
    return;
  }
  if (result.length === 0) context.out('no identities');
  for (const identity of result)
    context.out(
      `${identity.id}  ${identity.provider}  ${identity.email ?? '(no address)'}  linked ${day(identity.linkedAt)}  last used ${day(identity.lastUsedAt)}`,
    );
}

export async function remove(context: CliContext, values: { email?: string; id?: string }) {
  const identityId = values.id;
  if (identityId === undefined || identityId === '') throw new CliError('--id is required', 2);
  const { config } = context;
  // Queued for the running service to deliver, as an invitation is; none without mail or AUTH_URL.
  const mail =
    config.authUrl === undefined
      ? undefined
      : await createMail(context.db, context.dialect, mailSettingsOf(config), {
          log: { info: () => undefined, warn: () => undefined },
          events: { mailSent: () => undefined, mailFailed: () => undefined },
          deliver: false,
        });
  const notice =
    mail !== undefined && mail.mode !== 'off' && config.authUrl !== undefined
      ? {
          mail: mail.queue,
          origin: config.authUrl,
          accountPagesPath: config.page.accountPagesPath,
          names: (id: string) =>
            config.identityProviders.find((provider) => provider.id === id)?.name ?? id,
        }
      : undefined;
  const { user, result } = await onNamedUser(context, values.email, async (ports, target) => {
    const outcome = await removeIdentityOfUser({ ...ports, notice }, { ...target, identityId });
    // The user is there (just looked up): 'missing' is the identity.
    return outcome === 'missing' ? ('no-such-identity' as const) : outcome;
  });
  if (result === 'no-such-identity')
    throw new CliError(
      `${user.email} has no identity ${identityId}: see gatehouse users identities`,
    );
  context.out(`removed identity ${identityId} of ${user.email}`);
}
