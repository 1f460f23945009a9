/**
 * What each caller holds of a bounded store (the memory store), so that the caller who fills it
 * is the one refused: every entry that is a decision (an X-Request-ID, a consent counter, a
 * learnt consent or scope) belongs to the caller whose request wrote it (its TPP id, or
 * `ip:<network>` for a caller without one), and no owner may hold more than its share of the
 * store's entries or bytes. Rate-limit counters belong to nobody: they are the one kind of state
 * the store may drop under pressure, so they never crowd out anyone.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OwnerShares } from "./owner_shares.ts";
 *
 * const shares = new OwnerShares({ maxEntries: 100, maxBytes: 10_000, share: 0.25 });
 * shares.add("ip:192.0.2.0", 25, 2500);
 * assert.equal(shares.over("ip:192.0.2.0", 1, 10), "entries"); // 26 of its 25
 * assert.equal(shares.over("PSDGE-NBG-000001", 1, 10), undefined);
 * ```
 */

/** What an owner holds now. */
interface Held {
  entries: number;
  bytes: number;
}

/** The share of a bounded store each owner may hold. */
export class OwnerShares {
  /** Most entries one owner holds. */
  readonly maxEntries: number;
  /** Most bytes one owner holds. */
  readonly maxBytes: number;
  readonly #held = new Map<string, Held>();

  /** `share`: the fraction (above 0, at most 1) of `maxEntries` and of `maxBytes` one owner holds. */
  constructor(options: { maxEntries: number; maxBytes: number; share: number }) {
    if (!(options.share > 0 && options.share <= 1)) {
      throw new RangeError(
        `A store's owner share must be above 0 and at most 1, got ${options.share}`,
      );
    }
    this.maxEntries = Math.max(1, Math.floor(options.maxEntries * options.share));
    this.maxBytes = Math.max(1, Math.floor(options.maxBytes * options.share));
  }

  /** Owners holding something now. */
  get owners(): number {
    return this.#held.size;
  }

  /** What `owner` holds (zeros when nothing). */
  held(owner: string): Readonly<Held> {
    return this.#held.get(owner) ?? { entries: 0, bytes: 0 };
  }

  /**
   * Which bound `entries` more entries of `bytes` more bytes would take `owner` past, if one;
   * the empty owner (state of no caller) has no share.
   */
  over(owner: string, entries: number, bytes: number): "entries" | "bytes" | undefined {
    // Nothing more (a rate-limit counter, a rewrite in place): no look-up on the hot path.
    if (owner === "" || (entries <= 0 && bytes <= 0)) return undefined;
    const held = this.#held.get(owner);
    if ((held?.entries ?? 0) + entries > this.maxEntries) return "entries";
    if ((held?.bytes ?? 0) + bytes > this.maxBytes) return "bytes";
    return undefined;
  }

  /** Counts `entries` and `bytes` (either may be negative) to `owner`. */
  add(owner: string, entries: number, bytes: number): void {
    if (owner === "") return;
    const held = this.#held.get(owner);
    if (!held) {
      this.#held.set(owner, { entries, bytes });
      return;
    }
    held.entries += entries;
    held.bytes += bytes;
    // An owner that holds nothing is forgotten: the map is as large as the owners holding state.
    if (held.entries <= 0) this.#held.delete(owner);
  }

  clear(): void {
    this.#held.clear();
  }
}
