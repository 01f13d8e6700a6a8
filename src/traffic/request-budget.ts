/** How much one client group may ask for: tokens refilled per second, and the most it may save. */
export interface RequestBudgetLimits {
  perSecond: number;
  burst: number;
}

interface Bucket {
  tokens: number;
  /** When `tokens` was last brought up to date (ms on the budget's clock). */
  at: number;
}

/**
 * A token bucket per client group (src/traffic/client-group.ts): each request takes its cost
 * in tokens, refilled at `perSecond` up to `burst`. Memory is bounded: at most `groupsMax`
 * buckets, the least recently seen forgotten first. A forgotten group starts again with a full
 * bucket, which is what an idle one would have had anyway; emptying the others' buckets takes
 * as many addresses as there are places.
 */
export class RequestBudget {
  readonly #buckets = new Map<string, Bucket>();

  constructor(
    private readonly limits: RequestBudgetLimits,
    private readonly now: () => number,
    private readonly groupsMax = 65_536,
  ) {}

  /** Takes `cost` tokens from `group`: 0 when it had them, else whole seconds until it will. */
  take(group: string, cost: number): number {
    const { perSecond, burst } = this.limits;
    const at = this.now();
    let bucket = this.#buckets.get(group);
    if (bucket === undefined) {
      bucket = { tokens: burst, at };
      if (this.#buckets.size >= this.groupsMax) {
        this.#buckets.delete(this.#buckets.keys().next().value as string);
      }
    } else {
      // Re-inserted: Map order is the order groups were last seen in.
      this.#buckets.delete(group);
      const elapsedMs = Math.max(0, at - bucket.at);
      bucket.tokens = Math.min(burst, bucket.tokens + (elapsedMs * perSecond) / 1000);
      bucket.at = at;
    }
    this.#buckets.set(group, bucket);
    if (bucket.tokens >= cost) {
      bucket.tokens -= cost;
      return 0;
    }
    return Math.max(1, Math.ceil((cost - bucket.tokens) / perSecond));
  }
}
