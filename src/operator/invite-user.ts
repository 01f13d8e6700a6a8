import { issueInvitation, type IssuedInvitation } from '../account/invitation/invitations.js';
import { pagePathsUnder } from '../account/paths.js';
import type { OutboxQueue } from '../mail/outbox-queue.js';
import { auditOperatorAction, type Actor, type OperatorPorts } from './actor.js';

export interface InviteUser {
  /** Normalised (src/users/email.ts). */
  email: string;
  /** Empty: none given (the person types one). */
  name: string;
  /** The public origin the link is built on (AUTH_URL). */
  origin: string;
  /** ACCOUNT_PAGES_PATH as the service has it: the link leads to its invitation page. */
  accountPagesPath: string | undefined;
  ttlSeconds: number;
  /**
   * Not stored yet: the accepted invitation records `invitedBy: 'operator'`, as account_tokens
   * has no column for who invited.
   */
  actor: Actor;
}

/**
 * An invitation and, with `mail`, its mail, in one transaction (src/account/invitations.ts):
 * `{ outcome: 'taken' }` when the address has an account. Without `mail` the link is only
 * returned, for the operator to pass on.
 */
export async function inviteUser(
  ports: OperatorPorts & { mail: OutboxQueue | undefined },
  invite: InviteUser,
): Promise<IssuedInvitation> {
  const issued = await issueInvitation(ports.db, ports.mail, {
    email: invite.email,
    name: invite.name,
    origin: invite.origin,
    pages: pagePathsUnder(invite.accountPagesPath),
    ttlSeconds: invite.ttlSeconds,
    now: ports.now(),
  });
  // After the invitation's own transaction (issueInvitation owns it): an invitation is no
  // account yet, and the audit entry says who asked for it.
  if (issued.outcome !== 'taken')
    await auditOperatorAction(ports.db, invite.actor, 'user_invited', null, {
      email: invite.email,
    });
  return issued;
}
