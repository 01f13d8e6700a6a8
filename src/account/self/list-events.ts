import { listEvents } from '../model/events.js';
import { shownNetwork } from '../../util/ip-prefix.js';
import { answer, type AccountAction, type AccountDeps } from '../action.js';
import type { HistoryItem } from '../../pages/account/account-security.js';
import { deviceLabel } from '../../sessions/device-label.js';

/** The user's history as the account page shows it: devices as labels, operators by name. */
export async function ownHistory(deps: AccountDeps, userId: string): Promise<HistoryItem[]> {
  const events = await listEvents(deps.db, userId);
  const said = (value: unknown) => (typeof value === 'string' ? value : undefined);
  return events.map((event) => ({
    type: event.type,
    at: new Date(event.at).toISOString(),
    ip: shownNetwork(event.ip),
    // An operator's event has no address; its device is the operator's label.
    ...(event.ip === '' ? { device: '', by: event.device } : { device: deviceLabel(event.device) }),
    reason: said(event.detail?.reason),
    method: said(event.detail?.method),
  }));
}

/** `GET /api/account/events`: the user's own record, 90 days, newest first, addresses cut. */
export const listOwnEvents: AccountAction = async (deps, { signedIn }) => {
  const events = await listEvents(deps.db, signedIn.user.id);
  return answer({
    events: events.map((event) => ({
      type: event.type,
      at: new Date(event.at).toISOString(),
      ip: shownNetwork(event.ip),
      device: event.device,
    })),
  });
};
