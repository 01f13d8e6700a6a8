// Scenarios about state shared through the database: a session made anywhere reads
// everywhere, an ending anywhere ends it everywhere, the throttle counts once for the fleet.
// Each returns what it observed; `problems(result)` says what would be wrong (see scenarios.mjs).
import { fleetEmailMaxFailures } from './fleet.mjs';
import { Client } from './http.mjs';

export const password = 'fleet password, not on any list';
const wrongPassword = 'fleet password, but wrong';

/** What the client's cookies read as through each target, one request each, in order. */
const readings = async (client, targets) => {
  const out = {};
  for (const target of targets) {
    out[target.name] = (await client.at(target.url).sessionEmail()).email;
  }
  return out;
};
const nginxTarget = (fleet) => ({ name: 'nginx', url: fleet.origin });

// ---------------------------------------------------------------------------------------------
/** A session made through each instance, read through every instance and through nginx. */
export async function crossRead(fleet) {
  const email = 'cross@example.com';
  await fleet.addUser(email, password);
  const results = [];
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
}

crossRead.problems = ({ email, results }) =>
  results.flatMap(({ signedInThrough, outcome, reads }) => [
    ...(outcome === 'signed-in' ? [] : [`sign-in through ${signedInThrough}: ${outcome}`]),
    ...Object.entries(reads)
      .filter(([, read]) => read !== email)
      .map(([name, read]) => `made through ${signedInThrough}, read through ${name}: ${read}`),
  ]);

// ---------------------------------------------------------------------------------------------
/**
 * A cookie signed in through A and copied to the others; then an ending through A (sign-out)
 * or through the CLI (revoke-sessions, disable). `before` and `after` are the copies' reads,
 * `after` being the very first request each instance gets once the ending has returned.
 */
export async function revocation(fleet) {
  const [a, ...others] = fleet.instances;
  const cases = [
    { action: 'sign-out through A', email: 'signout@example.com', readers: others },
    { action: 'users revoke-sessions', email: 'revoke@example.com', readers: fleet.instances },
    { action: 'users disable', email: 'disable@example.com', readers: fleet.instances },
  ];
  await Promise.all(cases.map(({ email }) => fleet.addUser(email, password)));
  const results = [];
  for (const { action, email, readers } of cases) {
    const client = new Client(a.url);
    const { outcome } = await client.signIn(email, password);
    const before = await readings(client, readers);
    let ended;
    if (action === 'sign-out through A') {
      ended = (await client.signOut()).status;
    } else {
      const command = action === 'users disable' ? 'disable' : 'revoke-sessions';
      ended = (await fleet.users([command, '--email', email])).code;
    }
    const after = await readings(client, readers);
    const again =
      action === 'users disable'
        ? (await new Client(others[0].url).signIn(email, password)).outcome
        : undefined;
    results.push({ action, email, outcome, before, ended, after, signInAfter: again });
  }
  return { results };
}

revocation.problems = ({ results }) =>
  results.flatMap(({ action, email, outcome, before, ended, after, signInAfter }) => [
    ...(outcome === 'signed-in' ? [] : [`${action}: sign-in ${outcome}`]),
    ...Object.entries(before)
      .filter(([, read]) => read !== email)
      .map(([name, read]) => `${action}: before, read through ${name} gave ${read}`),
    ...(ended === 200 || ended === 0 ? [] : [`${action}: ending it gave ${ended}`]),
    ...Object.entries(after)
      .filter(([, read]) => read !== null)
      .map(([name, read]) => `${action}: copied cookie still reads ${read} through ${name}`),
    ...(signInAfter === undefined || signInAfter === 'credentials'
      ? []
      : [`${action}: sign-in afterwards gave ${signInAfter}`]),
  ]);

// ---------------------------------------------------------------------------------------------
/**
 * Wrong passwords for one email, spread three ways (all through A; A, B, C in turn; through
 * nginx), until the first refusal; then the right password through every instance and nginx.
 * `trippedAt` is the attempt that was first refused: the limit + 1 if the count is global.
 */
export async function throttle(fleet) {
  const instances = fleet.instances;
  const patterns = [
    { pattern: `all through ${instances[0].name}`, targets: [instances[0]] },
    { pattern: `${instances.map((i) => i.name).join(', ')} in turn`, targets: instances },
    { pattern: 'through nginx (least_conn)', targets: [nginxTarget(fleet)] },
  ];
  const emails = patterns.map((_, index) => `throttle-${index}@example.com`);
  await Promise.all(emails.map((email) => fleet.addUser(email, password)));
  const results = [];
  for (const [index, { pattern, targets }] of patterns.entries()) {
    const email = emails[index];
    const attempts = [];
    for (let n = 0; n < fleetEmailMaxFailures + 3; n += 1) {
      const target = targets[n % targets.length];
      const { outcome, response } = await new Client(target.url).signIn(email, wrongPassword);
      attempts.push({ through: target.name, outcome, upstream: response.upstream });
      if (outcome !== 'credentials') break;
    }
    const lockedEverywhere = {};
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
}

throttle.problems = ({ limit, results }) =>
  results.flatMap(({ pattern, trippedAt, refusedWith, rightPasswordAfter }) => [
    ...(trippedAt === limit + 1 && refusedWith === 'rate_limited'
      ? []
      : [`${pattern}: first refusal at attempt ${trippedAt} (${refusedWith}), not ${limit + 1}`]),
    ...Object.entries(rightPasswordAfter)
      .filter(([, outcome]) => outcome !== 'rate_limited')
      .map(([name, outcome]) => `${pattern}: right password through ${name} gave ${outcome}`),
  ]);
