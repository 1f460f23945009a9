/**
 * Concurrency limits towards the core: a pool of `maxInFlight` slots with a bounded wait queue
 * (first come, first served) and a deadline on each wait. A request that finds the queue full, or
 * that waits longer than the deadline, is shed at once instead of piling up on a core that is
 * already at its capacity (Envoy's circuit-breaking thresholds `max_requests` and
 * `max_pending_requests`, per instance).
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

/** The limits of one pool. */
export interface Limits {
  /** Requests at the core at once. */
  maxInFlight: number;
  /** Requests waiting for a slot at once (0: none wait). */
  maxQueue: number;
  /** How long a request waits for a slot, in milliseconds. */
  queueTimeoutMs: number;
}

/** Releases a slot (idempotent). */
export type Release = () => void;

/** Why a request was shed: the queue was full, or its wait ran out. */
export type Shed = "full" | "timeout";

interface Waiter {
  grant(release: Release): void;
  timer: ReturnType<typeof setTimeout>;
}

/** One pool of slots with its wait queue. */
export class ConcurrencyLimiter {
  readonly #limits: Limits;
  #inFlight = 0;
  readonly #queue: Waiter[] = [];
  /** The most requests in flight at once since the pool was made. */
  peak = 0;
  /** Requests shed, by reason. */
  readonly shed = { full: 0, timeout: 0 };

  constructor(limits: Limits) {
    this.#limits = { ...limits };
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
    if (this.#inFlight < this.#limits.maxInFlight && this.#queue.length === 0) {
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
    this.#inFlight++;
    if (this.#inFlight > this.peak) this.peak = this.#inFlight;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#inFlight--;
      this.#drain();
    };
  }

  /** Hands free slots to the longest waiters. */
  #drain(): void {
    while (this.#inFlight < this.#limits.maxInFlight && this.#queue.length > 0) {
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

  /** The pool `name` with `limits`, made on first use. */
  pool(name: string, limits: Limits): ConcurrencyLimiter {
    const key = `${name} ${limits.maxInFlight}/${limits.maxQueue}/${limits.queueTimeoutMs}ms`;
    let pool = this.#pools.get(key);
    if (!pool) {
      pool = new ConcurrencyLimiter(limits);
      this.#pools.set(key, pool);
    }
    return pool;
  }

  /** Every pool by key. */
  entries(): IterableIterator<[string, ConcurrencyLimiter]> {
    return this.#pools.entries();
  }
}
