/**
 * The registry of an instance's breakers (src/upstream/breaker.ts) and of the caller circuits in
 * front of them (src/upstream/caller_circuits.ts): one breaker per origin (or operation) and
 * configuration, found again by a reload that keeps both.
 */
import { type BreakerConfig, type BreakerState, CircuitBreaker } from "./breaker.ts";
import { CallerCircuits } from "./caller_circuits.ts";

/** A breaker as the registry lists it. */
export interface BreakerEntry {
  /** What it guards: an origin, or an origin and an operation (`origin operationId`). */
  name: string;
  /** Whether it guards the whole origin (readiness) or one operation. */
  scope: "origin" | "operation";
  breaker: CircuitBreaker;
  /** Each caller's own circuit, in front of `breaker` (made by {@link Breakers.callers}). */
  callers?: CallerCircuits;
}

/**
 * The breakers of a gateway instance, by what they guard and their configuration: operations
 * with the same origin (or operation) and configuration share one, and a reload that keeps both
 * finds it again in its state.
 */
export class Breakers {
  readonly #entries = new Map<string, BreakerEntry>();
  /** Called when any breaker changes state (metrics, log). */
  onChange?: (entry: BreakerEntry, from: BreakerState, to: BreakerState) => void;

  /** The breaker guarding `name` with `config`, made on first use. */
  breaker(name: string, scope: BreakerEntry["scope"], config: BreakerConfig): CircuitBreaker {
    const key = `${name} ${JSON.stringify(config)}`;
    let entry = this.#entries.get(key);
    if (!entry) {
      const made: BreakerEntry = { name, scope, breaker: new CircuitBreaker(config) };
      made.breaker.onChange = (from, to) => this.onChange?.(made, from, to);
      this.#entries.set(key, made);
      entry = made;
    }
    return entry.breaker;
  }

  /**
   * The caller circuits in front of the breaker guarding `name` with `config`: the breaker opens
   * when `needed` callers' own circuits opened within the window.
   */
  callers(
    name: string,
    scope: BreakerEntry["scope"],
    config: BreakerConfig & { needed: number },
  ): CallerCircuits {
    // `needed` is part of the registry's key: another count makes another breaker.
    const breaker = this.breaker(name, scope, config);
    const entry = this.list().find((e) => e.breaker === breaker)!;
    entry.callers ??= new CallerCircuits(breaker, { needed: config.needed });
    return entry.callers;
  }

  /** Every breaker. */
  list(): BreakerEntry[] {
    return [...this.#entries.values()];
  }

  /**
   * The state towards the upstream at `now`: `none` without a breaker of the origin, else the
   * worst of the origin breakers (open, half-open, closed).
   */
  originState(now: number): BreakerState | "none" {
    let worst: BreakerState | "none" = "none";
    const rank = { none: 0, closed: 1, "half-open": 2, open: 3 };
    for (const entry of this.#entries.values()) {
      if (entry.scope !== "origin") continue;
      const state = entry.breaker.state(now);
      if (rank[state] > rank[worst]) worst = state;
    }
    return worst;
  }

  /** How many breakers are open at `now`. */
  openCount(now: number): number {
    return this.list().filter((entry) => entry.breaker.state(now) === "open").length;
  }
}
