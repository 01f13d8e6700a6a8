import { invalidField } from '../http/errors.js';
import {
  listAudit,
  listSessionsOfUser,
  revokeSessionOfUser,
  revokeUserSessionsNow,
  verifyAudit,
} from '../operator/operations.js';
import { idParam, limitParam, notFound, ok } from './admin-call.js';
import type { AdminCall, AdminHandler } from './admin-call.js';

/** `GET /users/{id}/sessions`: the user's live sessions as they see them themselves. */
export const userSessions: AdminHandler = async (call) => {
  const sessions = await listSessionsOfUser(call.ports, {
    userId: idParam(call, 'user'),
    lifetime: call.ports.sessionLifetime,
  });
  if (sessions === 'missing') throw notFound('user');
  return ok({ sessions });
};

/** `POST /users/{id}/sessions/revoke`: every session ended now, as `users revoke-sessions`. */
export const revokeUserSessions: AdminHandler = async (call) => {
  const result = await revokeUserSessionsNow(call.ports, {
    userId: idParam(call, 'user'),
    actor: call.actor,
  });
  if (result === 'missing') throw notFound('user');
  return ok({ revoked: result.revoked });
};

/**
 * `POST /users/{id}/sessions/{sessionId}/revoke`: one session ended now, by the public id the
 * sessions list shows. 404 `not_found` for no such live session of that user (no such user
 * reads the same).
 */
export const revokeUserSession: AdminHandler = async (call) => {
  const result = await revokeSessionOfUser(call.ports, {
    userId: idParam(call, 'user'),
    sessionId: call.params.sessionId ?? '',
    actor: call.actor,
  });
  if (result === 'missing') throw notFound('session');
  return { status: 204 };
};

/** A time in the query: ISO 8601 or milliseconds since the epoch. */
function sinceParam(call: AdminCall): number | undefined {
  const raw = call.query.since;
  if (raw === undefined || raw === '') return undefined;
  const ms = /^[0-9]{1,15}$/.test(raw) ? Number(raw) : Date.parse(raw);
  if (!Number.isFinite(ms)) throw invalidField('since', 'since must be an ISO 8601 time.');
  return ms;
}

/** `GET /audit?since=&cursor=&limit=`: entries in the chain's order, as `audit export`. */
export const auditEntries: AdminHandler = async (call) => {
  const rawCursor = call.query.cursor;
  if (rawCursor !== undefined && rawCursor !== '' && !/^[0-9]{1,15}$/.test(rawCursor))
    throw invalidField('cursor', 'cursor is not one a page gave.');
  const page = await listAudit(call.ports, {
    since: sinceParam(call),
    cursor: rawCursor === undefined || rawCursor === '' ? undefined : Number(rawCursor),
    limit: limitParam(call, 100, 1000),
  });
  return ok({
    entries: page.entries,
    nextCursor: page.nextCursor === null ? null : String(page.nextCursor),
  });
};

/** `GET /audit/verify`: the chain walked, as `audit verify`. */
export const auditVerify: AdminHandler = async (call) =>
  ok(await verifyAudit(call.ports, { retentionDays: call.ports.auditRetentionDays }));
