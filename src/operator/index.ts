/**
 * What an operator does to users: the CLI (src/cli/commands/) and the admin API call these and
 * only these. Each takes its ports and an actor, commits its change and its event together, and
 * answers with a value (the user after the change, or a refusal such as 'missing'); none prints.
 */
export type { Actor, OperatorPorts } from './actor.js';
export { addUser, type AddUser } from './add.js';
export { disableUser } from './disable.js';
export { enableUser } from './enable.js';
export { inviteUser, type InviteUser } from './invite.js';
export { removeUser } from './remove.js';
export { renameUser } from './rename.js';
export { revokeUserSessionsNow } from './revoke-sessions.js';
export { setUserEmail, type SetEmail } from './set-email.js';
export { setUserPassword } from './set-password.js';
export { unlockEmail } from './unlock.js';
export { verifyUserEmail } from './verify-email.js';
