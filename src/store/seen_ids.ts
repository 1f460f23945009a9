/**
 * The memory store's X-Request-IDs used in unique mode (every id of a caller without TPP
 * identity): a key and the end of its retention, nothing else. They are most of what the store
 * holds under a write load (one per write for 24 h), so they are kept as cheaply as the heap
 * allows: one Map from key to a slot shared by the ids of one caller that end in the same millisecond
 * (its owner and that time: one per id at a low rate, shared under load), in insertion order, which is also the order they expire in (oldest
 * first) when their retention is the same. No entry object, record or queue slot per id. Each id
 * counts to its owner's share of the store (`owner_shares.ts`): `onForget` hears of each one
 * that goes.
 */

/** Estimated heap bytes of one id besides its key: its slot in the Map and the key's header. */
const ID_BYTES = 80;

/** The estimated bytes of one id (see {@link ID_BYTES}). */
export function seenIdBytes(key: string): number {
  return ID_BYTES + key.length;
}

/** Who holds ids until when: shared by the ids of one owner that end in the same millisecond. */
interface Slot {
  readonly owner: string;
  /** The end of the retention (milliseconds since the epoch). */
  readonly until: number;
}

/** Ids used in unique mode, each until the end of its retention. */
export class SeenIds {
  /** Key to its owner and the end of its retention. */
  readonly #until = new Map<string, Slot>();
  /** The newest slot of each owner holding ids (reused while ids end at its time). */
  readonly #slots = new Map<string, Slot>();
  /** A live iterator over `#until` from its oldest id, and the id it stopped at. */
  #cursor: MapIterator<[string, Slot]>;
  #head: [string, Slot] | undefined;
  /** Estimated bytes held. */
  bytes = 0;
  /** Hears of every id forgotten: its owner and estimated bytes. */
  onForget?: (owner: string, bytes: number) => void;

  constructor(_base?: number) {
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
    const slot = this.#until.get(key);
    return slot !== undefined && slot.until > now;
  }

  /** Holds `key`, which it does not hold, for `owner` until `expires`. */
  add(key: string, expires: number, owner = ""): void {
    const until = expires;
    let slot = this.#slots.get(owner);
    if (slot?.until !== until) {
      slot = { owner, until };
      this.#slots.set(owner, slot);
    }
    this.#until.set(key, slot);
    this.bytes += seenIdBytes(key);
  }

  /** Forgets `key`, if it is held. */
  delete(key: string): void {
    const slot = this.#until.get(key);
    if (!slot) return;
    this.#until.delete(key);
    this.bytes -= seenIdBytes(key);
    this.onForget?.(slot.owner, seenIdBytes(key));
    // Dropped with the owner's ids (the map stays as large as the owners holding ids); an id
    // added later makes a new slot.
    if (this.#slots.get(slot.owner) === slot) {
      this.#slots.delete(slot.owner);
    }
  }

  /** The oldest id held, skipping the ones forgotten or added again since the cursor passed. */
  #oldest(): [string, Slot] | undefined {
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
      if (!oldest || oldest[1].until > now) return;
      this.delete(oldest[0]);
      this.#head = undefined;
    }
  }

  /** Forgets every id whose retention ended (one behind a longer-lived id included). */
  sweepAll(now: number): void {
    for (const [key, slot] of this.#until) if (slot.until <= now) this.delete(key);
  }

  clear(): void {
    this.#until.clear();
    this.#slots.clear();
    this.#head = undefined;
    this.#cursor = this.#until.entries();
    this.bytes = 0;
  }
}
