/**
 * Concurrency limits towards the core: a pool of `maxInFlight` slots with a bounded wait queue
 * (first come, first served) and a deadline on each wait. A request that finds the queue full, or
 * that waits longer than the deadline, is shed at once instead of piling up on a core that is
 * already at its capacity (Envoy's circuit-breaking thresholds `max_requests` and
 * `max_pending_requests`, per instance).
 *
 * With `callerShare`, no caller (a TPP, or a client network without one) holds more than that
 * share of the slots or of the queue: one caller's slow requests cannot take every slot, and a
 * slot that frees goes to the longest waiter whose caller is below its share.
 *
 * With `adaptive`, the number of slots follows the core's latency (Gradient2 or AIMD, see
 * `adaptive_limit.ts`) within its bounds: each released slot reports how long the core took and
 * whether it dropped the request, and a slot freed by a lower limit is not handed on.
 *
 * Pools live in a {@link LimiterPools} registry kept by the services, so that the operations of
 * one pool share its slots and a policy reload keeps the requests in flight counted.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ConcurrencyLimiter } from "./limiter.ts";
 *
 * const pool = new ConcurrencyLimiter({ maxInFlight: 1, maxQueue: 1, queueTimeoutMs: 50 });
 * const slot = await pool.acquire(); // a release, or "full" / "timeout" when shed
 * assert.equal(typeof slot, "function");
 * const waiting = pool.acquire(); // queued behind the slot in use
 * assert.equal(await pool.acquire(), "full"); // no slot and the queue is full: shed at once
 * assert.equal(await waiting, "timeout"); // the slot was not released within 50 ms
 * if (typeof slot === "function") slot();
 * assert.equal(pool.inFlight, 0);
 * ```
 */
import { Aimd, Gradient2, SampledLimit } from "./adaptive_limit.ts";

/** An in-flight limit that follows the core's latency, within `[min, max]`. */
export interface AdaptiveLimits {
  /** Gradient2 (latency against its long-term average) or AIMD (drops and timeouts). */
  algorithm: "gradient" | "aimd";
  /** The lowest the limit goes. */
  min: number;
  /** The highest the limit goes. */
  max: number;
  /** Where the limit starts. */
  initial: number;
  /** How long measurements are gathered before the limit moves, in milliseconds. */
  windowMs: number;
  /** Gradient: how much slower than its baseline the core may answer before the limit shrinks. */
  tolerance: number;
  /** AIMD: what the limit is multiplied by after a drop. */
  backoff: number;
  /** AIMD: an answer slower than this (ms) counts as a drop. */
  timeoutMs: number;
}

/** The limits of one pool. */
export interface Limits {
  /** Requests at the core at once. */
  maxInFlight: number;
  /** Requests waiting for a slot at once (0: none wait). */
  maxQueue: number;
  /** How long a request waits for a slot, in milliseconds. */
  queueTimeoutMs: number;
  /** The limit follows the core's latency, from `adaptive.initial` (`maxInFlight` is not read). */
  adaptive?: AdaptiveLimits;
  /**
   * The most of the slots (of the limit, rounded up) and of the queue one caller holds, above 0
   * and at most 1; unset: no share.
   */
  callerShare?: number;
}

/**
 * How the core handled the request: `ok` (answered), `dropped` (a timeout, a connection error or
 * an answer that it is overloaded); nothing: it never reached the core (no measurement).
 */
export type Outcome = "ok" | "dropped";

/** Releases a slot (idempotent), with how the core handled the request. */
export type Release = (outcome?: Outcome) => void;

/** Why a request was shed: the queue was full, or its wait ran out. */
export type Shed = "full" | "timeout";

interface Waiter {
  caller: string;
  grant(release: Release): void;
  timer: ReturnType<typeof setTimeout>;
}

/** What one caller holds of a pool now. */
interface Held {
  inFlight: number;
  queued: number;
}

/** One pool of slots with its wait queue. */
export class ConcurrencyLimiter {
  readonly #limits: Limits;
  readonly #adaptive?: SampledLimit;
  readonly #now: () => number;
  #inFlight = 0;
  readonly #queue: Waiter[] = [];
  /** Callers holding a slot or a place in the queue (forgotten when they hold neither). */
  readonly #callers = new Map<string, Held>();
  /** The most requests in flight at once since the pool was made. */
  peak = 0;
  /** Requests shed, by reason. */
  readonly shed = { full: 0, timeout: 0 };

  constructor(limits: Limits, options: { now?: () => number } = {}) {
    this.#limits = { ...limits };
    this.#now = options.now ?? (() => performance.now());
    const adaptive = limits.adaptive;
    if (adaptive) {
      const bounds = { min: adaptive.min, max: adaptive.max, initial: adaptive.initial };
      const algorithm = adaptive.algorithm === "aimd"
        ? new Aimd({ ...bounds, backoff: adaptive.backoff, timeoutMs: adaptive.timeoutMs })
        : new Gradient2({ ...bounds, tolerance: adaptive.tolerance });
      this.#adaptive = new SampledLimit(algorithm, {
        windowMs: adaptive.windowMs,
        dropsEndWindow: adaptive.algorithm === "aimd",
      });
    }
  }

  /** Requests let through to the core at once now: `maxInFlight`, or the adaptive limit. */
  get limit(): number {
    return this.#adaptive?.limit ?? this.#limits.maxInFlight;
  }

  get limits(): Readonly<Limits> {
    return this.#limits;
  }

  /** Requests holding a slot now. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Requests waiting for a slot now. */
  get queued(): number {
    return this.#queue.length;
  }

  /** The most slots one caller holds now. */
  get callerSlots(): number {
    const share = this.#limits.callerShare;
    return share === undefined ? Infinity : Math.max(1, Math.ceil(this.limit * share));
  }

  /** The most places in the queue one caller holds. */
  get callerQueue(): number {
    const share = this.#limits.callerShare;
    return share === undefined ? Infinity : Math.ceil(this.#limits.maxQueue * share);
  }

  /** What `caller` holds now. */
  held(caller: string): Readonly<Held> {
    return this.#callers.get(caller) ?? { inFlight: 0, queued: 0 };
  }

  #held(caller: string): Held {
    let held = this.#callers.get(caller);
    if (!held) this.#callers.set(caller, held = { inFlight: 0, queued: 0 });
    return held;
  }

  #forget(caller: string, held: Held): void {
    if (held.inFlight === 0 && held.queued === 0) this.#callers.delete(caller);
  }

  /**
   * A slot's release for `caller`'s request, at once or after a wait, or why it is shed. The
   * queue holds only callers below their share of slots when none is free, so a free slot with
   * a caller below its share goes at once.
   */
  acquire(caller = ""): Release | Shed | Promise<Release | Shed> {
    const held = this.#held(caller);
    const below = held.inFlight < this.callerSlots;
    if (below && this.#inFlight < this.limit && !this.#waiting()) return this.#take(caller);
    if (this.#queue.length >= this.#limits.maxQueue || held.queued >= this.callerQueue) {
      this.#forget(caller, held);
      this.shed.full++;
      return "full";
    }
    held.queued++;
    return new Promise((resolve) => {
      const waiter: Waiter = {
        caller,
        grant: resolve,
        timer: setTimeout(() => {
          const at = this.#queue.indexOf(waiter);
          if (at >= 0) this.#queue.splice(at, 1);
          held.queued--;
          this.#forget(caller, held);
          this.shed.timeout++;
          resolve("timeout");
        }, this.#limits.queueTimeoutMs),
      };
      this.#queue.push(waiter);
    });
  }

  /** Whether a waiter could take a slot now (then a newcomer goes behind it). */
  #waiting(): boolean {
    return this.#queue.length > 0 && this.#eligible() >= 0;
  }

  /** The longest waiter whose caller is below its share of slots, or -1. */
  #eligible(): number {
    const most = this.callerSlots;
    if (most === Infinity) return this.#queue.length > 0 ? 0 : -1;
    return this.#queue.findIndex((w) => this.held(w.caller).inFlight < most);
  }

  #take(caller: string): Release {
    const held = this.#held(caller);
    held.inFlight++;
    const inFlight = ++this.#inFlight;
    if (inFlight > this.peak) this.peak = inFlight;
    const start = this.#adaptive ? this.#now() : 0;
    let released = false;
    return (outcome) => {
      if (released) return;
      released = true;
      this.#inFlight--;
      held.inFlight--;
      this.#forget(caller, held);
      if (this.#adaptive && outcome) {
        const rtt = this.#now() - start;
        this.#adaptive.sample({ start, rtt, inFlight, dropped: outcome === "dropped" });
      }
      this.#drain();
    };
  }

  /** Hands free slots to the longest waiters. */
  #drain(): void {
    while (this.#inFlight < this.limit) {
      const at = this.#eligible();
      if (at < 0) return;
      const [waiter] = this.#queue.splice(at, 1);
      clearTimeout(waiter.timer);
      this.#held(waiter.caller).queued--;
      waiter.grant(this.#take(waiter.caller));
    }
  }
}

/**
 * The pools of a gateway instance, by name and limits: operations whose pool has the same name and
 * the same limits share it, and a reload that keeps both finds it again with its counts (a pool
 * whose limits change starts anew).
 */
export class LimiterPools {
  readonly #pools = new Map<string, ConcurrencyLimiter>();
  readonly #names = new Map<ConcurrencyLimiter, string>();
  readonly #now?: () => number;

  /** `now`: the clock that times the core's answers (default `performance.now`). */
  constructor(options: { now?: () => number } = {}) {
    this.#now = options.now;
  }

  /** The pool `name` with `limits`, made on first use. */
  pool(name: string, limits: Limits): ConcurrencyLimiter {
    const adaptive = limits.adaptive ? ` ${JSON.stringify(limits.adaptive)}` : "";
    const share = limits.callerShare === undefined ? "" : ` share ${limits.callerShare}`;
    const key =
      `${name} ${limits.maxInFlight}/${limits.maxQueue}/${limits.queueTimeoutMs}ms${adaptive}${share}`;
    let pool = this.#pools.get(key);
    if (!pool) {
      pool = new ConcurrencyLimiter(limits, { now: this.#now });
      this.#pools.set(key, pool);
      this.#names.set(pool, name);
    }
    return pool;
  }

  /** Every pool by key. */
  entries(): IterableIterator<[string, ConcurrencyLimiter]> {
    return this.#pools.entries();
  }

  /**
   * Per pool name: the limit of its newest pool (a reload that changed the limits made a new one)
   * and the requests in flight and waiting in all of its pools.
   */
  gauges(): Map<string, { limit: number; inFlight: number; queued: number }> {
    const byName = new Map<string, { limit: number; inFlight: number; queued: number }>();
    for (const [pool, name] of this.#names) {
      const seen = byName.get(name);
      byName.set(name, {
        limit: pool.limit,
        inFlight: (seen?.inFlight ?? 0) + pool.inFlight,
        queued: (seen?.queued ?? 0) + pool.queued,
      });
    }
    return byName;
  }
}
