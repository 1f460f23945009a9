/**
 * A circuit per caller in front of an origin's breaker, so that the breaker opens on the core's
 * failure, not on one caller's: each caller (a TPP, or a client network without one) has its own
 * circuit with the breaker's settings, which opens on that caller's failures and refuses only
 * that caller's requests; the origin's breaker opens, for every caller, when `needed` callers'
 * circuits opened within its window (a core that fails fails everyone). While the origin is
 * half-open its one probe decides for all; a caller's half-open circuit lets one probe of that
 * caller through.
 *
 * Per request: one map lookup, and on a caller circuit's opening a walk over the circuits that
 * opened within the window (at most `needed` stay there).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { CircuitBreaker } from "./breaker.ts";
 * import { CallerCircuits } from "./caller_circuits.ts";
 *
 * const origin = new CircuitBreaker({ failures: 2, windowMs: 10_000, minRequests: 10, openMs: 5000 });
 * const circuits = new CallerCircuits(origin, { needed: 2 });
 * for (let i = 0; i < 2; i++) circuits.record(0, "A", true, circuits.admit(0, "A"));
 * assert.ok("retryMs" in circuits.admit(1, "A")); // A's circuit is open
 * assert.deepEqual(circuits.admit(1, "B"), { probe: false }); // B still goes to the core
 * for (let i = 0; i < 2; i++) circuits.record(2, "B", true, circuits.admit(2, "B"));
 * assert.equal(origin.state(3), "open"); // two callers failed: the core is failing
 * ```
 */
import { CircuitBreaker } from "./breaker.ts";

/** A request let through (`probe`: the one of a half-open circuit, whose), or refused. */
export type CallerAdmission = { probe: false | "origin" | "caller" } | { retryMs: number };

/** Callers with a circuit at most; past it the oldest made goes (it starts closed again). */
const MAX_CALLERS = 10_000;

/** The circuits of an origin's callers. */
export class CallerCircuits {
  readonly #origin: CircuitBreaker;
  readonly #needed: number;
  readonly #circuits = new Map<string, CircuitBreaker>();
  /** Callers whose circuit opened within the window, oldest first, with when. */
  readonly #opened = new Map<string, number>();
  /** Hears of each caller's circuit that opens (the log), and whether the origin's opened with it. */
  onCallerOpen?: (caller: string, originOpened: boolean) => void;

  /** `needed`: callers whose circuits open within the window to open the origin's. */
  constructor(origin: CircuitBreaker, options: { needed: number }) {
    this.#origin = origin;
    this.#needed = Math.max(1, options.needed);
  }

  /** Callers with a circuit now. */
  get size(): number {
    return this.#circuits.size;
  }

  /** The state of `caller`'s own circuit at `now` (closed when it has none). */
  state(now: number, caller: string) {
    return this.#circuits.get(caller)?.state(now) ?? "closed";
  }

  #circuit(caller: string): CircuitBreaker {
    let circuit = this.#circuits.get(caller);
    if (!circuit) {
      if (this.#circuits.size >= MAX_CALLERS) {
        this.#circuits.delete(this.#circuits.keys().next().value!);
      }
      circuit = new CircuitBreaker(this.#origin.config);
      this.#circuits.set(caller, circuit);
    }
    return circuit;
  }

  /** Whether `caller`'s request may go to the core now: the origin's circuit, then its own. */
  admit(now: number, caller: string): CallerAdmission {
    const origin = this.#origin.admit(now);
    if ("retryMs" in origin) return origin;
    if (origin.probe) return { probe: "origin" };
    const own = this.#circuit(caller).admit(now);
    if ("retryMs" in own) return own;
    return { probe: own.probe ? "caller" : false };
  }

  /** Records the outcome of `caller`'s admitted request. */
  record(now: number, caller: string, failed: boolean, admission: CallerAdmission): void {
    if ("retryMs" in admission) return;
    if (admission.probe === "origin") {
      this.#origin.record(now, failed, true);
      if (!failed) this.#opened.clear();
      return;
    }
    const circuit = this.#circuits.get(caller);
    if (!circuit) return;
    const before = circuit.state(now);
    circuit.record(now, failed, admission.probe === "caller");
    if (before !== "open" && circuit.state(now) === "open") this.#callerOpened(now, caller);
  }

  /** An admitted request that did not reach the core: it counts for nothing. */
  cancel(caller: string, admission: CallerAdmission): void {
    if ("retryMs" in admission) return;
    if (admission.probe === "origin") this.#origin.cancel(true);
    else this.#circuits.get(caller)?.cancel(admission.probe === "caller");
  }

  #callerOpened(now: number, caller: string): void {
    this.#opened.delete(caller);
    this.#opened.set(caller, now);
    const windowMs = this.#origin.config.windowMs;
    for (const [other, at] of this.#opened) {
      if (now - at < windowMs) break;
      this.#opened.delete(other);
    }
    const originOpens = this.#opened.size >= this.#needed;
    if (originOpens) {
      this.#origin.trip(now);
      this.#opened.clear();
    }
    this.onCallerOpen?.(caller, originOpens);
  }
}
