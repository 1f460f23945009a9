/**
 * A bounded cache: the least recently used entry goes when the cap is reached, so that a flood of
 * distinct certificates or keys cannot grow memory without limit.
 */

/** A map with a size cap and least-recently-used eviction. */
export class BoundedCache<K, V> {
  readonly #entries = new Map<K, V>();
  readonly #cap: number;

  constructor(cap: number) {
    this.#cap = Math.max(1, cap);
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The cached value (marked as recently used), or `undefined`. */
  get(key: K): V | undefined {
    const value = this.#entries.get(key);
    if (value === undefined) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, value);
    return value;
  }

  set(key: K, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.#cap) {
      this.#entries.delete(this.#entries.keys().next().value as K);
    }
  }

  /** The cached value, or the one `make` returns (cached). */
  getOrSet(key: K, make: () => V): V {
    const found = this.get(key);
    if (found !== undefined) return found;
    const value = make();
    this.set(key, value);
    return value;
  }
}
