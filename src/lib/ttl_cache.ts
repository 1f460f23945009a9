/**
 * A small in-memory cache of answers with a time to live and a bound on its entries (the oldest
 * entry goes first), for the public product catalogue: per gateway instance, nothing shared.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { TtlCache } from "./ttl_cache.ts";
 *
 * const cache = new TtlCache<string>({ ttlMs: 60_000, maxEntries: 1000 });
 * cache.set("/v1/products/en", "[]", 0);
 * assert.deepEqual(cache.get("/v1/products/en", 1000), { value: "[]", expires: 60_000 });
 * assert.equal(cache.get("/v1/products/en", 60_000), undefined); // its time ran out
 * ```
 */

/** One entry and when it stops being fresh (ms since the epoch). */
export interface Cached<T> {
  value: T;
  expires: number;
}

/** A map with a time to live per entry and a maximum number of entries. */
export class TtlCache<T> {
  readonly #entries = new Map<string, Cached<T>>();
  readonly ttlMs: number;
  readonly maxEntries: number;

  constructor(options: { ttlMs: number; maxEntries: number }) {
    this.ttlMs = options.ttlMs;
    this.maxEntries = options.maxEntries;
  }

  /** The fresh entry of `key` at `now`, or `undefined` (an expired entry is dropped). */
  get(key: string, now: number): Cached<T> | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.expires > now) return entry;
    this.#entries.delete(key);
    return undefined;
  }

  /** Keeps `value` under `key` for the time to live from `now`. */
  set(key: string, value: T, now: number): Cached<T> {
    this.#entries.delete(key);
    if (this.#entries.size >= this.maxEntries) {
      // Map keeps insertion order: the first key is the oldest entry.
      this.#entries.delete(this.#entries.keys().next().value!);
    }
    const entry = { value, expires: now + this.ttlMs };
    this.#entries.set(key, entry);
    return entry;
  }

  get size(): number {
    return this.#entries.size;
  }
}
