import { listEvents } from '../model/events.js';
import { ipPrefix } from '../ip-prefix.js';
import { answer, type AccountAction } from '../action.js';

/** `GET /api/account/events`: the user's own record, 90 days, newest first, addresses cut. */
export const listOwnEvents: AccountAction = async (deps, { signedIn }) => {
  const events = await listEvents(deps.db, signedIn.user.id);
  return answer({
    events: events.map((event) => ({
      type: event.type,
      at: new Date(event.at).toISOString(),
      ip: ipPrefix(event.ip),
      device: event.device,
    })),
  });
};
