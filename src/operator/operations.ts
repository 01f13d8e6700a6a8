/**
 * What an operator does to users: the CLI (src/cli/commands/) and the admin API call these and
 * only these. Each takes its ports and an actor, commits its change and its event together, and
 * answers with a value (the user after the change, or a refusal such as 'missing'); none prints.
 */
export type { Actor, OperatorPorts } from './actor.js';
export { addUser, type AddUser } from './add-user.js';
export {
  exportAudit,
  listAudit,
  sealAudit,
  verifyAudit,
  type AuditEntry,
  type AuditVerdict,
  type SealOutcome,
} from './audit-log.js';
export { disableUser } from './disable-user.js';
export { enableUser } from './enable-user.js';
export { issueEnrolmentCode, type IssuedEnrolmentCode } from './enrolment-code.js';
export { findUsers, showUser, type UserSummary } from './find-users.js';
export { inviteUser, type InviteUser } from './invite-user.js';
export { removeUser } from './remove-user.js';
export { renameUser } from './rename-user.js';
export { resetSecondFactor } from './reset-second-factor.js';
export { revokeUserSessionsNow } from './revoke-user-sessions.js';
export { setUserEmail, type SetEmail } from './set-user-email.js';
export { setUserPassword } from './set-user-password.js';
export { unlockEmail, unlockUser } from './unlock.js';
export { listSessionsOfUser, revokeSessionOfUser, type SessionView } from './sessions-of-user.js';
export {
  identityAnswer,
  listIdentitiesOfUser,
  removeIdentityOfUser,
  type Identity,
} from './identities-of-user.js';
export { listMail, listWebhooks, retryMail, retryWebhook } from './outboxes.js';
export { verifyUserEmail } from './verify-user-email.js';
