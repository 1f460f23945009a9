/**
 * Circuit breakers towards the core: a breaker opens after `failures` failures in a row, or when
 * the share of failures in the last `windowMs` reaches `failureRatio` (once `minRequests` were
 * counted there); while open it admits nothing; after `openMs` it is half-open and admits one
 * probe, whose success closes it and whose failure opens it again (the classic three states, as
 * in resilience4j and Envoy's outlier detection). What a failure is (a timeout, a connection
 * error, a 5xx) is the caller's business; a request that never reached the core is cancelled and
 * counts for nothing.
 *
 * Breakers live in a registry kept by the services (src/upstream/breakers.ts), so that every
 * operation of one origin shares one breaker, `/readyz` and `/metrics` can see them and a reload
 * keeps them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { CircuitBreaker } from "./breaker.ts";
 *
 * const config = { failures: 2, windowMs: 10_000, minRequests: 10, openMs: 5000 };
 * const breaker = new CircuitBreaker(config);
 * breaker.record(0, true, false);
 * breaker.record(0, true, false); // two failures in a row open the circuit
 * assert.deepEqual(breaker.admit(1000), { retryMs: 4000 }); // open: nothing goes to the core
 * assert.deepEqual(breaker.admit(5001), { probe: true }); // half-open: one probe
 * breaker.record(5002, false, true); // the probe succeeded
 * assert.equal(breaker.state(5003), "closed");
 * ```
 */

/** When a breaker opens and how long it stays open. */
export interface BreakerConfig {
  /** Failures in a row that open the circuit (undefined: none). */
  failures?: number;
  /** Share of failures in the window that opens the circuit, 0 to 1 (undefined: none). */
  failureRatio?: number;
  /** The window of `failureRatio`, in milliseconds. */
  windowMs: number;
  /** Outcomes in the window before `failureRatio` is judged. */
  minRequests: number;
  /** How long the circuit stays open before a probe, in milliseconds. */
  openMs: number;
}

export type BreakerState = "closed" | "open" | "half-open";

/** A request let through (`probe`: the one of a half-open circuit), or refused for `retryMs`. */
export type Admission = { probe: boolean } | { retryMs: number };

/** The window is counted in this many buckets (a ring: old buckets are reused). */
const BUCKETS = 10;

interface Bucket {
  /** Start of the bucket's slice of time (ms since the epoch). */
  start: number;
  ok: number;
  failed: number;
}

/** One circuit breaker. */
export class CircuitBreaker {
  readonly config: Readonly<BreakerConfig>;
  #state: BreakerState = "closed";
  #openedAt = 0;
  #inRow = 0;
  #probing = false;
  readonly #buckets: Bucket[] = Array.from({ length: BUCKETS }, () => ({
    start: -Infinity,
    ok: 0,
    failed: 0,
  }));
  /** Called on every change of state. */
  onChange?: (from: BreakerState, to: BreakerState) => void;

  constructor(config: BreakerConfig) {
    this.config = Object.freeze({ ...config });
  }

  /** The state at `now` (an open circuit whose time ran out is half-open). */
  state(now: number): BreakerState {
    if (this.#state === "open" && now - this.#openedAt >= this.config.openMs) {
      this.#move("half-open");
    }
    return this.#state;
  }

  /** Whether a request may go to the core now. */
  admit(now: number): Admission {
    const state = this.state(now);
    if (state === "closed") return { probe: false };
    if (state === "open") return { retryMs: this.config.openMs - (now - this.#openedAt) };
    if (this.#probing) return { retryMs: 1000 };
    this.#probing = true;
    return { probe: true };
  }

  /** Records the outcome of an admitted request. */
  record(now: number, failed: boolean, probe: boolean): void {
    if (probe) {
      this.#probing = false;
      if (failed) this.#open(now);
      else this.#close();
      return;
    }
    if (this.#state !== "closed") return;
    const bucket = this.#bucket(now);
    if (failed) bucket.failed++;
    else bucket.ok++;
    this.#inRow = failed ? this.#inRow + 1 : 0;
    const { failures, failureRatio } = this.config;
    if (failures !== undefined && this.#inRow >= failures) return this.#open(now);
    if (failureRatio !== undefined && failed) {
      let ok = 0;
      let bad = 0;
      for (const b of this.#buckets) {
        if (now - b.start < this.config.windowMs) {
          ok += b.ok;
          bad += b.failed;
        }
      }
      if (ok + bad >= this.config.minRequests && bad / (ok + bad) >= failureRatio) {
        this.#open(now);
      }
    }
  }

  /**
   * Opens a closed circuit at `now` for a cause found outside it (several callers' own circuits
   * opened: `caller_circuits.ts`).
   */
  trip(now: number): void {
    if (this.state(now) === "closed") this.#open(now);
  }

  /** An admitted request that did not reach the core: it counts for nothing. */
  cancel(probe: boolean): void {
    if (probe) this.#probing = false;
  }

  #bucket(now: number): Bucket {
    const width = Math.max(1, Math.ceil(this.config.windowMs / BUCKETS));
    const slice = Math.floor(now / width);
    const bucket = this.#buckets[slice % BUCKETS];
    if (bucket.start !== slice * width) {
      bucket.start = slice * width;
      bucket.ok = 0;
      bucket.failed = 0;
    }
    return bucket;
  }

  #open(now: number): void {
    this.#openedAt = now;
    this.#move("open");
  }

  #close(): void {
    this.#inRow = 0;
    for (const b of this.#buckets) b.start = -Infinity;
    this.#move("closed");
  }

  #move(to: BreakerState): void {
    const from = this.#state;
    this.#state = to;
    if (from !== to) this.onChange?.(from, to);
  }
}
