/**
 * The in-process store: the embedded default of `deno task start`, for one gateway instance.
 * Same semantics as the Lua scripts of `lua/`, in TypeScript (a decision is synchronous, so
 * atomic). Bounded: entries expire, and past `maxEntries` the oldest entry is evicted, so memory
 * stays flat however many distinct keys arrive.
 */
import {
  type Completion,
  type Decision,
  type FrequencyVerdict,
  limitPeriod,
  type LimitVerdict,
  newStats,
  type Store,
  type StoreStats,
  type Verdict,
} from "./types.ts";

interface IdempotencyRecord {
  s: "inflight" | "done" | "gone" | "seen";
  f: string;
  t?: string;
  /** End of the in-flight time (milliseconds since the epoch). */
  u?: number;
  st?: number;
  h?: [string, string][];
  b?: string;
}

interface Entry {
  key: string;
  value: string | number | IdempotencyRecord;
  expires: number;
}

/** Options of {@link MemoryStore}. */
export interface MemoryStoreOptions {
  /** Hard cap on entries; the oldest is evicted past it. */
  maxEntries?: number;
  now?: () => number;
}

/**
 * What a queue slot holds once its entry left through the head: the slots before the head stay
 * in the array until it is compacted, and must not keep evicted answers alive meanwhile.
 */
const GONE: Entry = { key: "", value: 0, expires: 0 };

/** How many of the oldest entries each new key looks at for expiry. */
const SWEEP = 2;

/** The in-process store. */
export class MemoryStore implements Store {
  readonly kind = "memory";
  readonly stats: StoreStats = newStats();
  readonly #entries = new Map<string, Entry>();
  /**
   * Entries in insertion order (a queue). An entry deleted since leaves a dead slot, skipped
   * when it reaches the head and dropped when dead slots outnumber the entries.
   */
  #queue: Entry[] = [];
  #head = 0;
  readonly #maxEntries: number;
  readonly #now: () => number;

  constructor(options: MemoryStoreOptions = {}) {
    this.#maxEntries = options.maxEntries ?? 100_000;
    this.#now = options.now ?? Date.now;
  }

  /** Number of entries held (expired ones may linger until swept). */
  get size(): number {
    return this.#entries.size;
  }

  // An expired entry stays until it is swept at the head of the queue, evicted or set again:
  // setting it again reuses it in place. (Deleting it here would leave a dead slot in the queue
  // for every request of a caller whose rate-limit key expires between its requests.)
  #get(key: string, now: number): Entry["value"] | undefined {
    const entry = this.#entries.get(key);
    return entry && entry.expires > now ? entry.value : undefined;
  }

  /** Forgets a key; its slot stays in the queue (dead) until compacted, without the value. */
  #delete(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    entry.value = 0;
    this.#entries.delete(key);
  }

  #live(entry: Entry): boolean {
    return this.#entries.get(entry.key) === entry;
  }

  #set(key: string, value: Entry["value"], ttlMs: number, now: number): void {
    const expires = now + Math.max(1, ttlMs);
    const existing = this.#entries.get(key);
    if (existing) {
      existing.value = value;
      existing.expires = expires;
      return;
    }
    let queue = this.#queue;
    for (let i = 0; i < SWEEP && this.#head < queue.length; i++) {
      const oldest = queue[this.#head];
      if (this.#live(oldest)) {
        if (oldest.expires > now) break;
        this.#entries.delete(oldest.key);
      }
      queue[this.#head++] = GONE;
    }
    // The cap counts entries, not slots: the slots of keys deleted since (a released
    // X-Request-ID, a forgotten consent) must not evict a kept answer.
    while (this.#entries.size >= this.#maxEntries) {
      const oldest = queue[this.#head];
      if (this.#live(oldest)) this.#entries.delete(oldest.key);
      queue[this.#head++] = GONE;
    }
    if (this.#head > 1024 && this.#head * 2 > queue.length) {
      queue = this.#queue = queue.slice(this.#head);
      this.#head = 0;
    }
    // Dead slots behind a long-lived entry at the head: dropped once they outnumber the
    // entries (each pass is paid for by as many insertions, so memory stays proportional).
    if (queue.length - this.#head > 2 * this.#entries.size + 1024) {
      queue = this.#queue = queue.slice(this.#head).filter((e) => this.#live(e));
      this.#head = 0;
    }
    const entry = { key, value, expires };
    this.#entries.set(key, entry);
    queue.push(entry);
  }

  decide(decision: Decision): Promise<Verdict> {
    this.stats.roundTrips++;
    const now = this.#now();
    const nowUs = now * 1000;
    const verdict: Verdict = { now, blocked: false, limits: [] };

    const idem = decision.idempotency;
    let record: IdempotencyRecord | undefined;
    if (idem) {
      record = this.#get(idem.key, now) as IdempotencyRecord | undefined;
      let outcome: NonNullable<Verdict["idempotency"]>["outcome"] = "free";
      if (record) {
        if (idem.mode === "unique") outcome = "duplicate";
        else if (record.f !== idem.fingerprint) outcome = "mismatch";
        else if (record.s === "inflight") outcome = now >= record.u! ? "unknown" : "inflight";
        else if (record.s === "done") outcome = "replay";
        else if (record.s === "gone") outcome = "gone";
        else outcome = "duplicate";
      }
      verdict.idempotency = { outcome };
      if (outcome === "replay") {
        verdict.idempotency.response = {
          status: record!.st!,
          headers: record!.h!,
          body: record!.b!,
        };
        return Promise.resolve(verdict);
      }
      if (outcome !== "free" && idem.enforce) {
        verdict.blocked = true;
        return Promise.resolve(verdict);
      }
    }

    const tats: number[] = [];
    for (const limit of decision.limits) {
      const period = limitPeriod(limit);
      const tau = period * limit.burst;
      const tat = Math.max((this.#get(limit.key, now) as number | undefined) ?? nowUs, nowUs);
      const next = tat + period;
      const allowAt = next - tau;
      let result: LimitVerdict;
      if (nowUs >= allowAt) {
        result = {
          allowed: true,
          remaining: Math.floor((nowUs - allowAt) / period + 1e-6),
          resetMs: Math.ceil((next - nowUs) / 1000),
          retryMs: 0,
        };
      } else {
        result = {
          allowed: false,
          remaining: 0,
          resetMs: Math.ceil((tat - nowUs) / 1000),
          retryMs: Math.ceil((allowAt - nowUs) / 1000),
        };
        if (limit.enforce) verdict.blocked = true;
      }
      tats.push(next);
      verdict.limits.push(result);
    }

    const frequency = decision.frequency;
    let day: { key: string; end: number } | undefined;
    if (frequency) {
      const consent = this.#get(frequency.consentKey, now) as string | undefined;
      const match = consent === undefined ? null : /^([01])\|(\d+)$/.exec(consent);
      const result: FrequencyVerdict = {
        counted: false,
        allowed: true,
        limit: 0,
        used: 0,
        retryMs: 0,
        known: match !== null,
      };
      if (match) {
        if (match[1] === "0") {
          result.counted = true;
          result.limit = 1;
        } else if (!frequency.psuInitiated) {
          result.counted = true;
          result.limit = Math.min(Number(match[2]), frequency.max);
        }
      } else if (frequency.unknownLimit > 0 && !frequency.psuInitiated) {
        result.counted = true;
        result.limit = frequency.unknownLimit;
      }
      if (result.counted) {
        day = frequency.days.find((d) => d.start <= now && now < d.end) ??
          frequency.days[Math.floor(frequency.days.length / 2)];
        result.used = (this.#get(day.key, now) as number | undefined) ?? 0;
        result.retryMs = day.end - now;
        if (result.used >= result.limit) {
          result.allowed = false;
          if (frequency.enforce) verdict.blocked = true;
        }
      }
      verdict.frequency = result;
    }

    if (verdict.blocked) return Promise.resolve(verdict);
    decision.limits.forEach((limit, i) => {
      if (verdict.limits[i].allowed) {
        this.#set(limit.key, tats[i], Math.ceil((tats[i] - nowUs) / 1000) + 1, now);
      }
    });
    const counted = verdict.frequency;
    if (day && counted?.counted && counted.allowed) {
      counted.used++;
      this.#set(day.key, counted.used, day.end + 3_600_000 - now, now);
    }
    if (idem && verdict.idempotency?.outcome === "free") {
      if (idem.mode === "replay") {
        this.#set(
          idem.key,
          { s: "inflight", f: idem.fingerprint, t: idem.token, u: now + idem.inflightMs },
          Math.max(idem.inflightMs, idem.retentionMs),
          now,
        );
      } else {
        this.#set(idem.key, { s: "seen", f: idem.fingerprint }, idem.retentionMs, now);
      }
      verdict.idempotency.outcome = "claimed";
    }
    return Promise.resolve(verdict);
  }

  complete(completion: Completion): Promise<void> {
    this.stats.roundTrips++;
    const now = this.#now();
    const record = this.#get(completion.key, now) as IdempotencyRecord | undefined;
    if (!record || record.t !== completion.token) return Promise.resolve();
    if (completion.action === "release") {
      this.#delete(completion.key);
      return Promise.resolve();
    }
    const response = completion.response;
    this.#set(
      completion.key,
      {
        s: completion.action,
        f: record.f,
        t: record.t,
        st: response?.status,
        h: response?.headers,
        b: response?.body,
      },
      completion.retentionMs,
      now,
    );
    return Promise.resolve();
  }

  put(key: string, value: string, ttlMs: number): Promise<void> {
    this.stats.roundTrips++;
    this.#set(key, value, ttlMs, this.#now());
    return Promise.resolve();
  }

  delete(key: string): Promise<void> {
    this.stats.roundTrips++;
    this.#delete(key);
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.#entries.clear();
    return Promise.resolve();
  }
}
