/**
 * The in-process store: the embedded default of `deno task start`, for one gateway instance.
 * Same semantics as the Lua scripts of `lua/`: a decision is `entries.ts`'s, shared with the
 * durable stores, made on this store's entries (synchronous, so atomic). Bounded in entries and in bytes: entries expire, and past a bound the oldest rate-limit
 * counters are evicted, so memory stays flat however many distinct keys arrive. Everything else
 * is a decision, never evicted inside its retention: an X-Request-ID record (its retry would run
 * again), a consent's day counter (a used-up consent would read again), a learnt consent or
 * consent scope (an out-of-consent read would pass). Each of those belongs to the caller who wrote
 * it (`Decision.owner`, the `owner` of `put`), and no caller holds more than `ownerShare` of the
 * store (`owner_shares.ts`): a caller past its share is refused, the others are not. When only
 * decisions are left, a write that needs room fails as a store outage, and each check's `fail`
 * mode applies. Refusals are counted and logged once a minute with their cause (`full_log.ts`);
 * `condition()` reports a full store (readiness: degraded), not one caller's share.
 */
import { type Logger, logToStderr } from "../lib/log.ts";
import {
  type Completion,
  type Decision,
  newStats,
  type Store,
  type StoreCondition,
  type StoreStats,
  StoreUnavailableError,
  type Verdict,
} from "./types.ts";
import {
  completeOnEntry,
  decideOnEntries,
  type EntryValue,
  type EntryWrite,
  type IdRecord,
  refundOnEntry,
} from "./entries.ts";
import { seenIdBytes, SeenIds } from "./seen_ids.ts";
import { FullLog } from "./full_log.ts";
import { OwnerShares } from "./owner_shares.ts";

/**
 * The record of an id used in unique mode: the same for every such id (nothing of the request is
 * compared on its reuse). Such ids are held apart, in {@link SeenIds}.
 */
const SEEN: IdRecord = Object.freeze({ s: "seen", f: "" });

/** {@link SEEN} as a decision reads it: no end of its own (the set of such ids keeps that). */
const SEEN_ENTRY = Object.freeze({ value: SEEN, expires: Infinity });

type Value = EntryValue;

interface Entry {
  key: string;
  value: Value;
  expires: number;
  /** Estimated bytes of the entry (see {@link sizeOf}). */
  bytes: number;
  /** A decision (anything but a rate-limit counter): never evicted before it expires. */
  pinned: boolean;
  /** Who wrote it (a pinned entry counts to its share; "": no caller). */
  owner: string;
}

/** One write of a decision, applied only when every write of it fits. */
type Write = [key: string, value: Value, ttlMs: number, pinned: boolean];

/** Options of {@link MemoryStore}. */
export interface MemoryStoreOptions {
  /** Most entries held. */
  maxEntries?: number;
  /** Most bytes held, as {@link sizeOf} estimates them. */
  maxBytes?: number;
  now?: () => number;
  /** Where a full store is logged (once a minute, with the cause); default: JSON lines on stderr. */
  log?: Logger;
  /**
   * The most one caller (a TPP, or `ip:<network>`) holds of `maxEntries` and of `maxBytes` in
   * decisions (above 0, at most 1; default 0.25): a caller past it is refused, not the others.
   */
  ownerShare?: number;
}

/** The default {@link MemoryStoreOptions.ownerShare}: four callers fill the store, not one. */
export const OWNER_SHARE = 0.25;

/**
 * What a queue slot holds once its entry left through the head: the slots before the head stay
 * in the array until it is compacted, and must not keep evicted answers alive meanwhile.
 */
const GONE: Entry = { key: "", value: 0, expires: 0, bytes: 0, pinned: false, owner: "" };

/** The gateway's error lines without its logger (a store made without one still says it is full). */
const STDERR: Logger = {
  info: (entry) => logToStderr("info", entry),
  error: (entry) => logToStderr("error", entry),
};

/** How many of the oldest entries each new key looks at for expiry. */
const SWEEP = 2;

/** Least time between two full sweeps for expired entries when the store is full. */
const FULL_SWEEP_MS = 1000;

/**
 * Estimated heap bytes of one entry besides its key and value: the Map entry, the entry object,
 * its queue slot (V8 keeps ASCII strings at one byte a character, as counted below).
 */
const ENTRY_BYTES = 128;

/** An entry's estimated size: what makes a stored answer of 60 KB count as 60 KB. */
function sizeOf(key: string, value: Value): number {
  const bytes = ENTRY_BYTES + key.length;
  if (typeof value === "string") return bytes + value.length;
  if (typeof value === "number") return bytes + 8;
  return bytes + 64 + (value.f?.length ?? 0) + (value.t?.length ?? 0) + (value.a?.length ?? 0);
}

/** Entries in insertion order; an entry deleted since leaves a dead slot, skipped at the head. */
class Queue {
  slots: Entry[] = [];
  head = 0;
  /** Live entries in it. */
  count = 0;
}

/** The in-process store. */
export class MemoryStore implements Store {
  readonly kind = "memory";
  readonly stats: StoreStats = newStats();
  readonly #entries = new Map<string, Entry>();
  /** X-Request-ID records (never evicted) and everything else (evicted oldest first). */
  readonly #pinned = new Queue();
  readonly #evictable = new Queue();
  /** Ids used in unique mode (never evicted either), held apart and compactly. */
  readonly #seen: SeenIds;
  #bytes = 0;
  #evictableBytes = 0;
  #lastFullSweep = -Infinity;
  readonly #maxEntries: number;
  readonly #maxBytes: number;
  readonly #now: () => number;
  readonly #fullLog: FullLog;
  /** Writes refused because their caller holds its share (the store is not full). */
  readonly #shareLog: FullLog;
  readonly #shares: OwnerShares;

  constructor(options: MemoryStoreOptions = {}) {
    this.#maxEntries = options.maxEntries ?? 100_000;
    this.#maxBytes = options.maxBytes ?? 64 * 1024 * 1024;
    this.#now = options.now ?? Date.now;
    this.#fullLog = new FullLog("memory", options.log ?? STDERR);
    this.#shareLog = new FullLog(
      "memory",
      options.log ?? STDERR,
      "store share reached, writes refused",
    );
    this.#shares = new OwnerShares({
      maxEntries: this.#maxEntries,
      maxBytes: this.#maxBytes,
      share: options.ownerShare ?? OWNER_SHARE,
    });
    this.#seen = new SeenIds();
    this.#seen.onForget = (owner, bytes) => this.#shares.add(owner, -1, -bytes);
  }

  /** What `owner` holds in decisions (entries and estimated bytes). */
  held(owner: string): { entries: number; bytes: number } {
    return { ...this.#shares.held(owner) };
  }

  /** Number of entries held (expired ones may linger until swept). */
  get size(): number {
    return this.#entries.size + this.#seen.size;
  }

  /** Estimated bytes held (see `max_bytes`). */
  get bytes(): number {
    return this.#bytes + this.#seen.bytes;
  }

  // An expired entry stays until it is swept at the head of the queue, evicted or set again:
  // setting it again reuses it in place. (Deleting it here would leave a dead slot in the queue
  // for every request of a caller whose rate-limit key expires between its requests.)
  #get(key: string, now: number): Value | undefined {
    const entry = this.#entries.get(key);
    return entry && entry.expires > now ? entry.value : undefined;
  }

  /** The live entry of `key`, as `entries.ts` decides on it. */
  #entry(key: string, now: number): Entry | undefined {
    const entry = this.#entries.get(key);
    return entry && entry.expires > now ? entry : undefined;
  }

  /** The shared record of an X-Request-ID used in unique mode, if `key` is one. */
  #seenEntry(key: string, now: number): { value: IdRecord; expires: number } | undefined {
    return this.#seen.has(key, now) ? SEEN_ENTRY : undefined;
  }

  /** A write of `entries.ts` as this store applies it (the record of a unique-mode id shared). */
  #toWrite(write: EntryWrite, now: number): Write {
    const value = write.value!;
    const shared = typeof value === "object" && value.s === "seen" ? SEEN : value;
    return [write.key, shared, write.expires - now, !write.evictable];
  }

  #queue(entry: Entry): Queue {
    return entry.pinned ? this.#pinned : this.#evictable;
  }

  #live(entry: Entry): boolean {
    return this.#entries.get(entry.key) === entry;
  }

  /** Forgets an entry; its slot stays in its queue (dead) until compacted, without the value. */
  #remove(entry: Entry): void {
    this.#entries.delete(entry.key);
    this.#queue(entry).count--;
    this.#bytes -= entry.bytes;
    if (!entry.pinned) this.#evictableBytes -= entry.bytes;
    else this.#shares.add(entry.owner, -1, -entry.bytes);
    entry.value = 0;
  }

  #delete(key: string): void {
    const entry = this.#entries.get(key);
    if (entry) this.#remove(entry);
    else this.#seen.delete(key);
  }

  /** The oldest live entry of a queue, dropping the dead slots before it. */
  #oldest(queue: Queue): Entry | undefined {
    while (queue.head < queue.slots.length) {
      const entry = queue.slots[queue.head];
      if (this.#live(entry)) return entry;
      queue.slots[queue.head++] = GONE;
    }
    return undefined;
  }

  /** Forgets up to `max` expired entries at the head of a queue. */
  #sweep(queue: Queue, now: number, max: number): void {
    for (let i = 0; i < max; i++) {
      const oldest = this.#oldest(queue);
      if (!oldest || oldest.expires > now) return;
      this.#remove(oldest);
      queue.slots[queue.head++] = GONE;
    }
  }

  /** Forgets a few of the oldest expired entries of each kind: every new key pays for them. */
  #sweepOldest(now: number): void {
    this.#sweep(this.#evictable, now, SWEEP);
    this.#sweep(this.#pinned, now, SWEEP);
    this.#seen.sweep(now, SWEEP);
  }

  /** Forgets every expired entry (when full: one expired behind a longer-lived one counts too). */
  #sweepAll(now: number): void {
    if (now - this.#lastFullSweep < FULL_SWEEP_MS) return;
    this.#lastFullSweep = now;
    for (const entry of this.#entries.values()) if (entry.expires <= now) this.#remove(entry);
    this.#seen.sweepAll(now);
  }

  #compact(queue: Queue): void {
    if (queue.head > 1024 && queue.head * 2 > queue.slots.length) {
      queue.slots = queue.slots.slice(queue.head);
      queue.head = 0;
    }
    // Dead slots behind a long-lived entry at the head: dropped once they outnumber the
    // entries (each pass is paid for by as many insertions, so memory stays proportional).
    if (queue.slots.length - queue.head > 2 * queue.count + 1024) {
      queue.slots = queue.slots.slice(queue.head).filter((e) => this.#live(e));
      queue.head = 0;
    }
  }

  /** Whether `entries` more entries of `bytes` more bytes fit, evicting what may be evicted. */
  #fits(entries: number, bytes: number, now: number): boolean {
    const room = () =>
      this.#maxEntries - this.size + this.#evictable.count >= entries &&
      this.#maxBytes - this.bytes + this.#evictableBytes >= bytes;
    if (room()) return true;
    this.#sweepAll(now);
    return room();
  }

  /** Evicts the oldest evictable entries until `entries` more of `bytes` more bytes fit. */
  #makeRoom(entries: number, bytes: number, now: number): void {
    while (this.size + entries > this.#maxEntries || this.bytes + bytes > this.#maxBytes) {
      const oldest = this.#oldest(this.#evictable);
      if (!oldest) throw this.#full(now, entries, bytes);
      this.#remove(oldest);
      this.#evictable.slots[this.#evictable.head++] = GONE;
    }
  }

  /** Counts and logs a write refused for want of room (`entries` and `bytes` more). */
  #full(now: number, entries: number, bytes: number): StoreUnavailableError {
    this.stats.errors++;
    const held = this.#pinned.count + this.#seen.size;
    const cause = this.size - this.#evictable.count + entries > this.#maxEntries
      ? `max_entries ${this.#maxEntries} reached: ${held} X-Request-IDs inside their retention`
      : `max_bytes ${this.#maxBytes} reached: ${
        this.bytes - this.#evictableBytes
      } bytes of X-Request-IDs inside their retention, ${bytes} more needed`;
    this.#fullLog.refuse(now, cause, () => this.#figures());
    return new StoreUnavailableError(`The memory store is full (${cause})`);
  }

  #figures() {
    return {
      entries: this.size,
      max_entries: this.#maxEntries,
      bytes: this.bytes,
      max_bytes: this.#maxBytes,
      refused: this.#fullLog.refused,
    };
  }

  /** Entries and bytes against the bounds, and whether writes were refused in the last minute. */
  condition(): StoreCondition {
    const cause = this.#fullLog.recent(this.#now());
    return {
      warnings: cause
        ? [
          `The memory store is full (${cause}): new writes are refused and each check's fail applies`,
        ]
        : [],
      capacity: this.#figures(),
    };
  }

  /** Applies the writes of `owner`, all or none: none when they do not fit or pass its share. */
  #write(writes: Write[], now: number, owner: string): void {
    let entries = 0;
    let bytes = 0;
    // What the owner's decisions grow by (entries it takes over from another owner included).
    let owned = 0;
    let ownedBytes = 0;
    for (const [key, value, , pinned] of writes) {
      const existing = this.#entries.get(key);
      // Only X-Request-ID records (pinned) may replace an id used in unique mode.
      const seen = pinned && this.#seen.holds(key);
      if (!existing && !seen) entries++;
      const size = value === SEEN ? seenIdBytes(key) : sizeOf(key, value);
      bytes += size - (existing?.bytes ?? 0) - (seen ? seenIdBytes(key) : 0);
      if (pinned) {
        const mine = existing?.pinned && existing.owner === owner;
        if (!mine) owned++;
        ownedBytes += size - (mine ? existing.bytes : 0);
      }
    }
    const grows = Math.max(0, ownedBytes);
    let over = this.#shares.over(owner, owned, grows);
    if (over) {
      // The owner's expired entries give their share back first.
      this.#sweepOldest(now);
      this.#sweepAll(now);
      over = this.#shares.over(owner, owned, grows);
    }
    // A full store is the operator's to hear of (logged, /readyz degraded) even when the caller
    // also holds its share: with a share of 1 it always does.
    if (!this.#fits(entries, Math.max(0, bytes), now)) {
      throw this.#full(now, entries, Math.max(0, bytes));
    }
    if (over) throw this.#overShare(now, owner, over);
    for (const [key, value, ttlMs, pinned] of writes) {
      this.#set(key, value, ttlMs, now, { pinned, owner });
    }
  }

  /** Counts and logs a write refused because `owner` holds its share of the store. */
  #overShare(now: number, owner: string, bound: "entries" | "bytes"): StoreUnavailableError {
    this.stats.errors++;
    const cause = bound === "entries"
      ? `"${owner}" holds its share of ${this.#shares.maxEntries} entries`
      : `"${owner}" holds its share of ${this.#shares.maxBytes} bytes`;
    this.#shareLog.refuse(now, cause, () => ({
      owner,
      ...this.#shares.held(owner),
      owners: this.#shares.owners,
    }));
    return new StoreUnavailableError(`The memory store refuses this caller's writes (${cause})`);
  }

  #set(
    key: string,
    value: Value,
    ttlMs: number,
    now: number,
    how: { pinned: boolean; owner: string },
  ): void {
    const { pinned, owner } = how;
    const expires = now + Math.max(1, ttlMs);
    if (value === SEEN) {
      // What this key held (its retention ended) makes way.
      this.#delete(key);
      this.#sweepOldest(now);
      this.#makeRoom(1, seenIdBytes(key), now);
      this.#seen.add(key, expires, owner);
      this.#shares.add(owner, 1, seenIdBytes(key));
      return;
    }
    // An id used in unique mode, its retention ended, makes way for a record.
    if (pinned) this.#seen.delete(key);
    const bytes = sizeOf(key, value);
    let existing = this.#entries.get(key);
    if (existing && this.bytes - existing.bytes + bytes > this.#maxBytes) {
      // A grown entry needs room: it goes to the back like a new one.
      this.#remove(existing);
      existing = undefined;
    }
    if (existing) {
      this.#bytes += bytes - existing.bytes;
      if (!existing.pinned) this.#evictableBytes += bytes - existing.bytes;
      else {
        // Written again, it belongs to its last writer.
        this.#shares.add(existing.owner, -1, -existing.bytes);
        this.#shares.add(owner, 1, bytes);
        existing.owner = owner;
      }
      existing.value = value;
      existing.expires = expires;
      existing.bytes = bytes;
      return;
    }
    this.#sweepOldest(now);
    this.#makeRoom(1, bytes, now);
    const entry: Entry = { key, value, expires, bytes, pinned, owner: pinned ? owner : "" };
    const queue = this.#queue(entry);
    this.#compact(queue);
    this.#entries.set(key, entry);
    queue.slots.push(entry);
    queue.count++;
    this.#bytes += bytes;
    if (!pinned) this.#evictableBytes += bytes;
    else this.#shares.add(entry.owner, 1, bytes);
  }

  decide(decision: Decision): Promise<Verdict> {
    this.stats.roundTrips++;
    const now = this.#now();
    const idem = decision.idempotency?.key;
    const { verdict, writes } = decideOnEntries(
      decision,
      now,
      (key) => this.#entry(key, now) ?? (key === idem ? this.#seenEntry(key, now) : undefined),
    );
    // Blocked or replayed: nothing to write.
    if (verdict.blocked || verdict.idempotency?.outcome === "replay") {
      return Promise.resolve(verdict);
    }
    try {
      this.#write(writes.map((write) => this.#toWrite(write, now)), now, decision.owner ?? "");
    } catch (error) {
      return Promise.reject(error);
    }
    return Promise.resolve(verdict);
  }

  complete(completion: Completion): Promise<void> {
    this.stats.roundTrips++;
    const now = this.#now();
    const write = completeOnEntry(completion, now, (key) => this.#entry(key, now));
    if (!write) return Promise.resolve();
    if (write.value === undefined) {
      this.#delete(completion.key);
      return Promise.resolve();
    }
    try {
      const owner = this.#entries.get(completion.key)?.owner ?? "";
      this.#write([this.#toWrite(write, now)], now, owner);
    } catch (error) {
      return Promise.reject(error);
    }
    return Promise.resolve();
  }

  refund(counter: string): Promise<void> {
    this.stats.roundTrips++;
    const write = refundOnEntry(counter, this.#now(), (key) => this.#entries.get(key));
    // In place: the counter keeps its expiry, its size and its place in the queue.
    if (write) this.#entries.get(counter)!.value = write.value;
    return Promise.resolve();
  }

  /** Keeps a learnt consent or scope: a decision of `owner`'s, never evicted before `ttlMs`. */
  put(key: string, value: string, ttlMs: number, owner = ""): Promise<void> {
    this.stats.roundTrips++;
    try {
      this.#write([[key, value, ttlMs, true]], this.#now(), owner);
    } catch (error) {
      return Promise.reject(error);
    }
    return Promise.resolve();
  }

  get(key: string): Promise<string | undefined> {
    this.stats.roundTrips++;
    const value = this.#get(key, this.#now());
    return Promise.resolve(typeof value === "string" ? value : undefined);
  }

  delete(key: string): Promise<void> {
    this.stats.roundTrips++;
    this.#delete(key);
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.#entries.clear();
    this.#seen.clear();
    this.#shares.clear();
    return Promise.resolve();
  }
}
