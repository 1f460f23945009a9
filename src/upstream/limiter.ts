/**
 * Concurrency limits towards the core: a pool of `maxInFlight` slots with a bounded wait queue
 * (first come, first served) and a deadline on each wait. A request that finds the queue full, or
 * that waits longer than the deadline, is shed at once instead of piling up on a core that is
 * already at its capacity (Envoy's circuit-breaking thresholds `max_requests` and
 * `max_pending_requests`, per instance).
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
  grant(release: Release): void;
  timer: ReturnType<typeof setTimeout>;
}

/** One pool of slots with its wait queue. */
export class ConcurrencyLimiter {
  readonly #limits: Limits;
  readonly #adaptive?: SampledLimit;
  readonly #now: () => number;
  #inFlight = 0;
  readonly #queue: Waiter[] = [];
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

  /** A slot's release, at once or after a wait, or why the request is shed. */
  acquire(): Release | Shed | Promise<Release | Shed> {
    if (this.#inFlight < this.limit && this.#queue.length === 0) {
      return this.#take();
    }
    if (this.#queue.length >= this.#limits.maxQueue) {
      this.shed.full++;
      return "full";
    }
    return new Promise((resolve) => {
      const waiter: Waiter = {
        grant: resolve,
        timer: setTimeout(() => {
          const at = this.#queue.indexOf(waiter);
          if (at >= 0) this.#queue.splice(at, 1);
          this.shed.timeout++;
          resolve("timeout");
        }, this.#limits.queueTimeoutMs),
      };
      this.#queue.push(waiter);
    });
  }

  #take(): Release {
    const inFlight = ++this.#inFlight;
    if (inFlight > this.peak) this.peak = inFlight;
    const start = this.#adaptive ? this.#now() : 0;
    let released = false;
    return (outcome) => {
      if (released) return;
      released = true;
      this.#inFlight--;
      if (this.#adaptive && outcome) {
        const rtt = this.#now() - start;
        this.#adaptive.sample({ start, rtt, inFlight, dropped: outcome === "dropped" });
      }
      this.#drain();
    };
  }

  /** Hands free slots to the longest waiters. */
  #drain(): void {
    while (this.#inFlight < this.limit && this.#queue.length > 0) {
      const waiter = this.#queue.shift()!;
      clearTimeout(waiter.timer);
      waiter.grant(this.#take());
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
    const key =
      `${name} ${limits.maxInFlight}/${limits.maxQueue}/${limits.queueTimeoutMs}ms${adaptive}`;
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
