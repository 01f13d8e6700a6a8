import { performance } from 'node:perf_hooks';

/*
 * The "*-answers" suites' statistical test, the sign-in's own (scripts/bench/refusal-timing.ts):
 * two kinds of request that must not be told apart, sent as interleaved pairs in random order,
 * only the request timed, medians compared; and every answer's bytes kept for comparing.
 */

/** status, headers but Date, body: what a client can compare. */
export async function bytesOf(response: Response): Promise<string> {
  const headers: string[] = [];
  response.headers.forEach((value, name) => {
    if (name !== 'date') headers.push(`${name}: ${value}`);
  });
  return JSON.stringify([response.status, headers, await response.text()]);
}

export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? 0)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
};

export interface EqualAnswersOptions<K extends string> {
  /** Starts the log line of each round, e.g. `forgot timing, SMTP up`. */
  label: string;
  /** The kind the other is measured against (its median is the 100 %). */
  baseline: K;
  /** The kind whose answer might give something away. */
  compared: K;
  /** One request of each kind, as a client sends it. */
  request: Record<K, () => Promise<Response>>;
  /**
   * Sent, untimed, right before each `request` of its kind: then `request` is the *next*
   * request on the connection, and what is timed is whether the work after this one's answer
   * shows in it.
   */
  before?: Record<K, () => Promise<Response>>;
  /** Pairs timed per round. */
  samples: number;
  /**
   * Off: the requests are sent (8 pairs, for the bytes) but not timed; `within` is true. By
   * default the time is compared once per `npm test`, with fast paths on: they change how a
   * session is read, never the work these routes do after their answer, and each round of
   * hundreds of pairs costs seconds.
   */
  timed?: boolean;
}

export interface EqualAnswers<K extends string> {
  /** Every distinct answer (see bytesOf) of each kind. */
  bytes: Record<K, Set<string>>;
  /** Whether a round's medians were within 10 % of each other. */
  within: boolean;
}

/**
 * 8 pairs to warm up (baseline first), then up to three rounds of `samples` pairs, each pair in
 * random order: a burst of noise from a neighbour (the machine is shared) passes, a real
 * difference (work done inside the answer for one kind only) stays. Within noise: 10 % of the
 * baseline's median.
 */
export async function equalAnswers<K extends string>(
  options: EqualAnswersOptions<K>,
): Promise<EqualAnswers<K>> {
  const { baseline, compared, samples: count } = options;
  const bytes = { [baseline]: new Set<string>(), [compared]: new Set<string>() } as Record<
    K,
    Set<string>
  >;
  let samples = { [baseline]: [], [compared]: [] } as unknown as Record<K, number[]>;
  const attempt = async (kind: K, keep: boolean) => {
    const first = options.before?.[kind];
    if (first !== undefined) await (await first()).arrayBuffer();
    const started = performance.now();
    const response = await options.request[kind]();
    const body = await bytesOf(response);
    const elapsed = performance.now() - started;
    bytes[kind].add(body);
    if (keep) samples[kind].push(elapsed);
  };
  for (let i = 0; i < 8; i += 1) {
    await attempt(baseline, false);
    await attempt(compared, false);
  }
  let within = !(options.timed ?? process.env.GATEHOUSE_TEST_FAST_PATHS !== 'off');
  for (let round = 1; round <= 3 && !within; round += 1) {
    samples = { [baseline]: [], [compared]: [] } as unknown as Record<K, number[]>;
    for (let i = 0; i < count; i += 1) {
      const order = Math.random() < 0.5 ? [compared, baseline] : [baseline, compared];
      for (const kind of order) await attempt(kind, true);
    }
    const base = median(samples[baseline]);
    const other = median(samples[compared]);
    const diffMs = other - base;
    console.log(
      `${options.label}, round ${round}: ${compared} ${other.toFixed(3)} ms vs ${baseline} ${base.toFixed(3)} ms median of ${count} each (${((diffMs / base) * 100).toFixed(1)} %)`,
    );
    within = Math.abs(diffMs) <= 0.1 * base;
  }
  return { bytes, within };
}
