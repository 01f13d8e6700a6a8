import { listSessionsOfUser, revokeSessionOfUser } from '../../operator/operations.js';
import { onNamedUser, type CliContext } from '../context.js';
import { CliError } from '../prompt.js';

export const sessionsHelp = `Usage: gatehouse users sessions --email <email> [--json]

Lists the user's live sessions as their own account page shows them: the id, the device, the
network, how and when they signed in, and when each was last seen.`;

export const revokeOneHelp = `Usage: gatehouse users revoke-session --email <email> --id <session id>

Ends one of the user's sessions, by the id \`users sessions\` shows; the others stay.`;

export async function list(context: CliContext, values: { email?: string; json?: boolean }) {
  const { result } = await onNamedUser(context, values.email, (ports, target) =>
    listSessionsOfUser(ports, { userId: target.userId, lifetime: context.config.session }),
  );
  if (values.json === true) {
    context.out(JSON.stringify(result));
    return;
  }
  if (result.length === 0) context.out('no live session');
  for (const session of result)
    context.out(
      `${session.id}  ${session.device}  ${session.ip}  ${session.method}  signed in ${session.createdAt}  last seen ${session.lastSeenAt}`,
    );
}

export async function revokeOne(context: CliContext, values: { email?: string; id?: string }) {
  const id = values.id ?? '';
  if (id === '') throw new CliError('--id is required: a session id from `users sessions`', 2);
  // The user is found first; 'missing' here is the session (onNamedUser words its own).
  const { user, result } = await onNamedUser(context, values.email, async (ports, target) =>
    (await revokeSessionOfUser(ports, { ...target, sessionId: id })) === 'missing'
      ? 'no-session'
      : 'revoked',
  );
  if (result === 'no-session')
    throw new CliError(`${user.email} has no live session ${id} (\`users sessions\` lists them)`);
  context.out(`ended session ${id} of ${user.email}`);
}
