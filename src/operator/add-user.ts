import type { User } from '../users/store.js';
import { insertUser } from '../users/writes.js';
import { auditOperatorAction, type Actor, type OperatorPorts } from './actor.js';

export interface AddUser {
  /** Normalised (src/users/email.ts). */
  email: string;
  name: string;
  /** Made by the caller from a password that met the policy (src/users/password-policy.ts). */
  passwordHash: string;
  /** The operator knows the address is the user's: it counts as verified from the start. */
  verified: boolean;
  actor: Actor;
}

/**
 * Creates a user, verified or not, in one transaction; 'taken' when the email has a user
 * (nothing written). No event: the user's record starts with their first sign-in, as before.
 */
export async function addUser(ports: OperatorPorts, add: AddUser): Promise<User | 'taken'> {
  return ports.db.transaction().execute(async (trx) => {
    const at = ports.now();
    const { email, name, passwordHash } = add;
    const user = await insertUser(trx, { email, name, passwordHash }, at, add.verified);
    if (user === null) return 'taken';
    await auditOperatorAction(trx, add.actor, 'user_created', user.id, { verified: add.verified });
    return user;
  });
}
