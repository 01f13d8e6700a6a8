// Scenarios about state shared through the database: a session made anywhere reads
// everywhere, an ending anywhere ends it everywhere, the throttle counts once for the fleet.
// Each returns what it observed; `problems(result)` says what would be wrong (see scenarios.ts).
import { fleetEmailMaxFailures, type Fleet, type Instance } from './fleet.ts';
import { Client, type Read, type SignInOutcome } from './http.ts';
import { scenario } from './scenario.ts';

export const password = 'fleet password, not on any list';
const wrongPassword = 'fleet password, but wrong';

/** What the client's cookies read as through each target, one request each, in order. */
interface Target {
  name: string;
  url: string;
}

const readings = async (client: Client, targets: readonly Target[]) => {
  const out: Record<string, Read> = {};
  for (const target of targets) {
    out[target.name] = (await client.at(target.url).sessionEmail()).email;
  }
  return out;
};
const nginxTarget = (fleet: Fleet): Target => ({ name: 'nginx', url: fleet.origin });

// ---------------------------------------------------------------------------------------------
/** A session made through each instance, read through every instance and through nginx. */
export const crossRead = scenario(
  async (fleet: Fleet) => {
    const email = 'cross@example.com';
    await fleet.addUser(email, password);
    const results: {
      signedInThrough: string;
      outcome: SignInOutcome;
      reads: Record<string, Read>;
    }[] = [];
    for (const instance of fleet.instances) {
      const client = new Client(instance.url);
      const { outcome } = await client.signIn(email, password);
      results.push({
        signedInThrough: instance.name,
        outcome,
        reads: await readings(client, [...fleet.instances, nginxTarget(fleet)]),
      });
    }
    return { email, results };
  },
  ({ email, results }) =>
    results.flatMap(({ signedInThrough, outcome, reads }) => [
      ...(outcome === 'signed-in' ? [] : [`sign-in through ${signedInThrough}: ${outcome}`]),
      ...Object.entries(reads)
        .filter(([, read]) => read !== email)
        .map(
          ([name, read]) =>
            `made through ${signedInThrough}, read through ${name}: ${String(read)}`,
        ),
    ]),
);

// ---------------------------------------------------------------------------------------------
/**
 * A cookie signed in through A and copied to the others; then an ending through A (sign-out)
 * or through the CLI (revoke-sessions, disable). `before` and `after` are the copies' reads,
 * `after` being the very first request each instance gets once the ending has returned.
 */
type Ending = 'sign-out through A' | 'users revoke-sessions' | 'users disable';

export const revocation = scenario(
  async (fleet: Fleet) => {
    const [a, ...others] = fleet.instances as [Instance, Instance, ...Instance[]];
    const cases: { action: Ending; email: string; readers: Instance[] }[] = [
      { action: 'sign-out through A', email: 'signout@example.com', readers: others },
      { action: 'users revoke-sessions', email: 'revoke@example.com', readers: fleet.instances },
      { action: 'users disable', email: 'disable@example.com', readers: fleet.instances },
    ];
    await Promise.all(cases.map(({ email }) => fleet.addUser(email, password)));
    const results: {
      action: Ending;
      email: string;
      outcome: SignInOutcome;
      before: Record<string, Read>;
      /** The sign-out's HTTP status, or the CLI's exit code. */
      ended: number | null;
      after: Record<string, Read>;
      signInAfter: SignInOutcome | undefined;
    }[] = [];
    for (const { action, email, readers } of cases) {
      const client = new Client(a.url);
      const { outcome } = await client.signIn(email, password);
      const before = await readings(client, readers);
      let ended: number | null;
      if (action === 'sign-out through A') {
        ended = (await client.signOut()).status;
      } else {
        const command = action === 'users disable' ? 'disable' : 'revoke-sessions';
        ended = (await fleet.users([command, '--email', email])).code;
      }
      const after = await readings(client, readers);
      const again =
        action === 'users disable'
          ? (await new Client((others[0] as Instance).url).signIn(email, password)).outcome
          : undefined;
      results.push({ action, email, outcome, before, ended, after, signInAfter: again });
    }
    return { results };
  },
  ({ results }) =>
    results.flatMap(({ action, email, outcome, before, ended, after, signInAfter }) => [
      ...(outcome === 'signed-in' ? [] : [`${action}: sign-in ${outcome}`]),
      ...Object.entries(before)
        .filter(([, read]) => read !== email)
        .map(([name, read]) => `${action}: before, read through ${name} gave ${String(read)}`),
      ...(ended === 200 || ended === 0 ? [] : [`${action}: ending it gave ${String(ended)}`]),
      ...Object.entries(after)
        .filter(([, read]) => read !== null)
        .map(
          ([name, read]) => `${action}: copied cookie still reads ${String(read)} through ${name}`,
        ),
      ...(signInAfter === undefined || signInAfter === 'credentials'
        ? []
        : [`${action}: sign-in afterwards gave ${signInAfter}`]),
    ]),
);

// ---------------------------------------------------------------------------------------------
/**
 * Wrong passwords for one email, spread three ways (all through A; A, B, C in turn; through
 * nginx), until the first refusal; then the right password through every instance and nginx.
 * `trippedAt` is the attempt that was first refused: the limit + 1 if the count is global.
 */
export const throttle = scenario(
  async (fleet: Fleet) => {
    const instances = fleet.instances as [Instance, ...Instance[]];
    const patterns: { pattern: string; targets: Target[] }[] = [
      { pattern: `all through ${instances[0].name}`, targets: [instances[0]] },
      { pattern: `${instances.map((i) => i.name).join(', ')} in turn`, targets: instances },
      { pattern: 'through nginx (least_conn)', targets: [nginxTarget(fleet)] },
    ];
    const emails = patterns.map((_, index) => `throttle-${index}@example.com`);
    await Promise.all(emails.map((email) => fleet.addUser(email, password)));
    const results: {
      pattern: string;
      email: string;
      attempts: { through: string; outcome: SignInOutcome; upstream: string }[];
      trippedAt: number | undefined;
      refusedWith: SignInOutcome | undefined;
      upstreams: string[];
      rightPasswordAfter: Record<string, SignInOutcome>;
    }[] = [];
    for (const [index, { pattern, targets }] of patterns.entries()) {
      const email = emails[index] as string;
      const attempts: (typeof results)[number]['attempts'] = [];
      for (let n = 0; n < fleetEmailMaxFailures + 3; n += 1) {
        const target = targets[n % targets.length] as Target;
        const { outcome, response } = await new Client(target.url).signIn(email, wrongPassword);
        attempts.push({ through: target.name, outcome, upstream: response.upstream });
        if (outcome !== 'credentials') break;
      }
      const lockedEverywhere: Record<string, SignInOutcome> = {};
      for (const target of [...instances, nginxTarget(fleet)]) {
        lockedEverywhere[target.name] = (
          await new Client(target.url).signIn(email, password)
        ).outcome;
      }
      const firstRefused = attempts.findIndex((a) => a.outcome !== 'credentials');
      results.push({
        pattern,
        email,
        attempts,
        trippedAt: firstRefused === -1 ? undefined : firstRefused + 1,
        refusedWith: attempts[firstRefused]?.outcome,
        upstreams: [...new Set(attempts.map((a) => a.upstream).filter(Boolean))],
        rightPasswordAfter: lockedEverywhere,
      });
    }
    return { limit: fleetEmailMaxFailures, results };
  },
  ({ limit, results }) =>
    results.flatMap(({ pattern, trippedAt, refusedWith, rightPasswordAfter }) => [
      ...(trippedAt === limit + 1 && refusedWith === 'rate_limited'
        ? []
        : [
            `${pattern}: first refusal at attempt ${String(trippedAt)} (${String(refusedWith)}), not ${limit + 1}`,
          ]),
      ...Object.entries(rightPasswordAfter)
        .filter(([, outcome]) => outcome !== 'rate_limited')
        .map(([name, outcome]) => `${pattern}: right password through ${name} gave ${outcome}`),
    ]),
);
