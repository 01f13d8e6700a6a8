import { HttpError } from '../../http/errors.js';
import { answer, type AccountAction } from '../action.js';
import { secondFactorsOf } from '../second-factors.js';

/**
 * `GET /api/account`: the user, their second factors (as the registered factors report them), and, beyond
 * the spec's fields, until when this session may use (recent) routes without re-authenticating
 * (a page asks for the password before the form instead of after it).
 */
export const showAccount: AccountAction = async (deps, { signedIn }) => {
  const user = await deps.store.view(signedIn.user.id);
  const until = await deps.recentUntil(signedIn.session.claims.sid);
  if (user === null || until === null) throw new HttpError('unauthenticated');
  return answer({
    user,
    secondFactors: await secondFactorsOf(deps.factors, signedIn.user.id),
    recentUntil: new Date(until).toISOString(),
  });
};
