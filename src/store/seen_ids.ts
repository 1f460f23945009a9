/**
 * The memory store's X-Request-IDs used in unique mode (every id of a caller without TPP
 * identity): a key and the end of its retention, nothing else. They are most of what the store
 * holds under a write load (one per write for 24 h), so they are kept as cheaply as the heap
 * allows: one Map from key to a small integer, which the collector does not trace, in insertion
 * order, which is also the order they expire in (oldest first) when their retention is the same.
 * No entry object, record or queue slot per id.
 */

/** Estimated heap bytes of one id besides its key: its slot in the Map and the key's header. */
const ID_BYTES = 80;

/** The estimated bytes of one id (see {@link ID_BYTES}). */
export function seenIdBytes(key: string): number {
  return ID_BYTES + key.length;
}

/** Ids used in unique mode, each until the end of its retention. */
export class SeenIds {
  /**
   * Key to the end of its retention, in milliseconds after `#base`: a small integer for the
   * store's first 12 days (2^30 ms), a boxed number after that (still right, only larger).
   */
  readonly #until = new Map<string, number>();
  readonly #base: number;
  /** A live iterator over `#until` from its oldest id, and the id it stopped at. */
  #cursor: MapIterator<[string, number]>;
  #head: [string, number] | undefined;
  /** Estimated bytes held. */
  bytes = 0;

  constructor(base: number) {
    this.#base = base;
    this.#cursor = this.#until.entries();
  }

  get size(): number {
    return this.#until.size;
  }

  /** Whether `key` is held, its retention ended or not. */
  holds(key: string): boolean {
    return this.#until.has(key);
  }

  /** Whether `key` is held and its retention has not ended at `now`. */
  has(key: string, now: number): boolean {
    const until = this.#until.get(key);
    return until !== undefined && until + this.#base > now;
  }

  /** Holds `key`, which it does not hold, until `expires`. */
  add(key: string, expires: number): void {
    this.#until.set(key, expires - this.#base);
    this.bytes += seenIdBytes(key);
  }

  /** Forgets `key`, if it is held. */
  delete(key: string): void {
    if (this.#until.delete(key)) this.bytes -= seenIdBytes(key);
  }

  /** The oldest id held, skipping the ones forgotten or added again since the cursor passed. */
  #oldest(): [string, number] | undefined {
    while (true) {
      if (!this.#head) {
        let next = this.#cursor.next();
        // An iterator that reached the end stays there: ids added since need a new one.
        if (next.done) next = (this.#cursor = this.#until.entries()).next();
        if (next.done) return undefined;
        this.#head = next.value;
      }
      if (this.#until.get(this.#head[0]) === this.#head[1]) return this.#head;
      this.#head = undefined;
    }
  }

  /** Forgets up to `max` of the oldest ids whose retention ended at `now`. */
  sweep(now: number, max: number): void {
    for (let forgotten = 0; forgotten < max; forgotten++) {
      const oldest = this.#oldest();
      if (!oldest || oldest[1] + this.#base > now) return;
      this.delete(oldest[0]);
      this.#head = undefined;
    }
  }

  /** Forgets every id whose retention ended (one behind a longer-lived id included). */
  sweepAll(now: number): void {
    for (const [key, until] of this.#until) if (until + this.#base <= now) this.delete(key);
  }

  clear(): void {
    this.#until.clear();
    this.#head = undefined;
    this.#cursor = this.#until.entries();
    this.bytes = 0;
  }
}
