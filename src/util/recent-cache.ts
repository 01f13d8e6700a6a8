/** A bound on what a {@link RecentCache}'s entries weigh together, besides their number. */
export interface RecentCacheWeight<K, V> {
  /** The most the entries may weigh together (bytes, when `weigh` estimates bytes). */
  maxWeight: number;
  /** An entry's weight, non-negative; asked once, when the entry is set. */
  weigh(key: K, value: V): number;
}

/**
 * A Map that forgets its oldest entries past `capacity` entries, or past `weight.maxWeight` when
 * given (insertion order; a hit re-inserts). An entry heavier than the whole budget is not kept.
 * Written by hand: it is a few lines, and the hot path wants no more than a Map lookup.
 */
export class RecentCache<K, V> {
  readonly #entries = new Map<K, V>();
  /** Each entry's weight, when weighed; its order does not matter. */
  readonly #weights: Map<K, number> | undefined;
  #totalWeight = 0;

  constructor(
    private readonly capacity: number,
    private readonly weight?: RecentCacheWeight<K, V>,
  ) {
    this.#weights = weight === undefined ? undefined : new Map();
  }

  get(key: K): V | undefined {
    const value = this.#entries.get(key);
    if (value !== undefined) {
      this.#entries.delete(key);
      this.#entries.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    this.#forget(key);
    const maxWeight = this.weight?.maxWeight ?? Infinity;
    const weight = this.weight?.weigh(key, value) ?? 0;
    // Keeping it would evict everything else and then it too.
    if (weight > maxWeight) return;
    this.#entries.set(key, value);
    if (this.#weights !== undefined) {
      this.#weights.set(key, weight);
      this.#totalWeight += weight;
    }
    while (
      this.#entries.size > 0 &&
      (this.#entries.size > this.capacity || this.#totalWeight > maxWeight)
    ) {
      this.#forget(this.#entries.keys().next().value as K);
    }
  }

  #forget(key: K): void {
    if (!this.#entries.delete(key) || this.#weights === undefined) return;
    this.#totalWeight -= this.#weights.get(key) ?? 0;
    this.#weights.delete(key);
  }
}
