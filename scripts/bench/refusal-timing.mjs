// Enumeration timing: an unknown email vs a known email with a wrong password must take the
// same time and get the same answer.
import { BenchError, email, median, now, unknownEmail, wrongPassword } from './common.mjs';
import { getCsrf, postCredentials } from './http.mjs';

export const timingSamples = 60;

/**
 * Unknown email vs known email + wrong password, interleaved in a random order per pair so
 * drift (JIT, GC, thermal) lands on both sides alike. Only the POST is timed.
 */
export async function refusalTiming(base) {
  const csrf = await getCsrf(base);
  const samples = { unknown: [], wrong: [] };
  const bodies = { unknown: new Set(), wrong: new Set() };
  const attempt = async (kind, record) => {
    const t0 = now();
    const { response, body } = await postCredentials(
      base,
      csrf,
      kind === 'unknown' ? unknownEmail : email,
      wrongPassword,
    );
    const elapsed = now() - t0;
    if (response.status !== 200 || !body.includes('error=CredentialsSignin')) {
      throw new BenchError(
        `refused sign-in (${kind}) answered ${response.status}: ${body.slice(0, 300)}`,
      );
    }
    if (record) {
      samples[kind].push(elapsed);
      bodies[kind].add(body);
    }
  };
  for (let i = 0; i < 4; i += 1) {
    await attempt('unknown', false);
    await attempt('wrong', false);
  }
  for (let i = 0; i < timingSamples; i += 1) {
    const order = Math.random() < 0.5 ? ['unknown', 'wrong'] : ['wrong', 'unknown'];
    for (const kind of order) await attempt(kind, true);
  }
  const unknown = median(samples.unknown);
  const wrong = median(samples.wrong);
  const sameBody =
    bodies.unknown.size === 1 &&
    bodies.wrong.size === 1 &&
    [...bodies.unknown][0] === [...bodies.wrong][0];
  return { unknown, wrong, diffPct: ((unknown - wrong) / wrong) * 100, sameBody, n: timingSamples };
}
