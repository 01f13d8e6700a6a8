/**
 * A Map that forgets its oldest entry past `capacity` (insertion order; a hit re-inserts).
 * Written by hand: it is ten lines, and the hot path wants no more than a Map lookup.
 */
export class RecentCache<K, V> {
  readonly #entries = new Map<K, V>();

  constructor(private readonly capacity: number) {}

  get(key: K): V | undefined {
    const value = this.#entries.get(key);
    if (value !== undefined) {
      this.#entries.delete(key);
      this.#entries.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.capacity) {
      this.#entries.delete(this.#entries.keys().next().value as K);
    }
  }
}
