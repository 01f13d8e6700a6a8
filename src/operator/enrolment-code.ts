import { lockFactors, lockedFactors } from '../account/model/factor-lock.js';
import { keyCodeDigests } from '../account/model/secrets.js';
import { issueOperatorEnrolmentCode } from '../account/totp/enrolment-codes.js';
import type { User } from '../users/store.js';
import { readUser } from '../users/writes.js';
import { auditOperatorAction, type Actor, type OperatorPorts } from './actor.js';

export interface IssuedEnrolmentCode {
  user: User;
  /** The code, shown once to the operator: never stored in clear, never logged. */
  code: string;
  expiresAt: number;
}

/**
 * A one-time enrolment code (SECOND_FACTOR=required): typed at sign-in in place of the code a
 * sign-in mails, it lets the account's holder enrol an authenticator app after their password
 * where mail is off, or where the operator vouches for them otherwise. Bound to the account as
 * it is now (its address and credential version), single use, valid a day; a new one voids the
 * earlier. Recorded in the audit log with the operator as actor (the code itself is not).
 * 'missing' when no such user; 'has_factor' when the account has TOTP or a passkey (nothing to
 * enrol: `reset-second-factor` first).
 */
export function issueEnrolmentCode(
  ports: OperatorPorts,
  request: {
    userId: string;
    actor: Actor;
    /**
     * The service's AUTH_SECRET values, for a caller outside the running service (the CLI):
     * the code is kept as a digest under them, and the service checks it so.
     */
    authSecrets?: readonly string[];
  },
): Promise<IssuedEnrolmentCode | 'missing' | 'has_factor'> {
  if (request.authSecrets !== undefined) keyCodeDigests(request.authSecrets);
  return ports.db.transaction().execute(async (trx) => {
    const user = await readUser(trx, request.userId);
    if (user === null) return 'missing';
    await lockFactors(trx, user.id);
    const factors = await lockedFactors(trx, user.id);
    if (factors.totp || factors.passkeys > 0) return 'has_factor';
    const now = ports.now();
    const issued = await issueOperatorEnrolmentCode(trx, user, now);
    await auditOperatorAction(trx, request.actor, 'enrolment_code_issued', user.id, {
      expiresAt: issued.expiresAt,
    });
    return { user, code: issued.code, expiresAt: issued.expiresAt };
  });
}
