// Enumeration timing: an unknown email vs a known email with a wrong password must take the
// same time and get the same answer.
import { BenchError, email, median, now, unknownEmail, wrongPassword } from './common.ts';
import { getCsrf, postCredentials } from './http.ts';

export const timingSamples = 60;

/**
 * Unknown email vs known email + wrong password, interleaved in a random order per pair so
 * drift (JIT, GC, thermal) lands on both sides alike. Only the POST is timed.
 */
/** Median POST times (ms) of the two refusals, their difference in %, and whether the bodies match. */
export interface RefusalTiming {
  unknown: number;
  wrong: number;
  diffPct: number;
  sameBody: boolean;
  n: number;
}

type Refusal = 'unknown' | 'wrong';

export async function refusalTiming(base: string): Promise<RefusalTiming> {
  const csrf = await getCsrf(base);
  const samples: Record<Refusal, number[]> = { unknown: [], wrong: [] };
  const bodies: Record<Refusal, Set<string>> = { unknown: new Set(), wrong: new Set() };
  const attempt = async (kind: Refusal, record: boolean): Promise<void> => {
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
    const order: Refusal[] = Math.random() < 0.5 ? ['unknown', 'wrong'] : ['wrong', 'unknown'];
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
