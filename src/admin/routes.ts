import { removeUserIdentity, userIdentities } from './identity-routes.js';
import { importUsersRoute } from './import-routes.js';
import type { AdminHandler } from './admin-call.js';
import { mailList, mailRetry, webhookList, webhookRetry } from './outbox-routes.js';
import {
  auditEntries,
  auditVerify,
  revokeUserSession,
  revokeUserSessions,
  userSessions,
} from './session-audit-routes.js';
import * as users from './user-routes.js';

export interface AdminRoute {
  method: 'GET' | 'POST' | 'DELETE';
  /** Fastify's form (`:id`); `openApiPath` gives the document's (`{id}`). */
  path: string;
  handle: AdminHandler;
}

const route = (method: AdminRoute['method'], path: string, handle: AdminHandler): AdminRoute => ({
  method,
  path: `/api/admin${path}`,
  handle,
});

/**
 * Every route of the admin API, one line each (the accounts spec's "Admin API"). Each calls
 * the operator operations the CLI calls (src/operator/), as the token's label.
 */
export const adminRoutes: readonly AdminRoute[] = [
  route('GET', '/users', users.listUsers),
  route('POST', '/users/import', importUsersRoute),
  route('GET', '/users/:id', users.getUser),
  route('DELETE', '/users/:id', users.remove),
  route('POST', '/invitations', users.invite),
  route('POST', '/users/:id/disable', users.disable),
  route('POST', '/users/:id/enable', users.enable),
  route('POST', '/users/:id/unlock', users.unlock),
  route('POST', '/users/:id/verify-email', users.verifyEmail),
  route('POST', '/users/:id/reset-second-factor', users.resetSecondFactor),
  route('POST', '/users/:id/enrolment-code', users.enrolmentCode),
  route('POST', '/users/:id/email', users.setEmail),
  route('POST', '/users/:id/name', users.rename),
  route('GET', '/users/:id/sessions', userSessions),
  route('POST', '/users/:id/sessions/revoke', revokeUserSessions),
  route('POST', '/users/:id/sessions/:sessionId/revoke', revokeUserSession),
  route('GET', '/users/:id/identities', userIdentities),
  route('POST', '/users/:id/identities/:identity/remove', removeUserIdentity),
  route('GET', '/mail', mailList),
  route('POST', '/mail/:id/retry', mailRetry),
  route('GET', '/webhooks', webhookList),
  route('POST', '/webhooks/:id/retry', webhookRetry),
  route('GET', '/audit', auditEntries),
  route('GET', '/audit/verify', auditVerify),
];

/** A route's path as docs/openapi.yaml writes it. */
export const openApiPath = (path: string) => path.replace(/:([a-zA-Z]+)/g, '{$1}');
