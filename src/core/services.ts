/**
 * What the checks and the proxy need from the outside world (fetch, clock, log, store, upstream
 * client), as one object so that tests pass their own; src/policy/services.ts builds the real ones.
 */
import type { Store } from "../store/types.ts";
import type { Upstream } from "../upstream/mod.ts";
import type { LimiterPools } from "../upstream/limiter.ts";
import type { Breakers } from "../upstream/breakers.ts";
import type { Metrics } from "../lib/metrics.ts";
import type { Logger } from "../lib/log.ts";

/** Everything the checks and the proxy need from the outside world. */
export interface Services {
  fetch: typeof fetch;
  log: Logger;
  /** Milliseconds since the epoch. */
  now(): number;
  /** Shared state (idempotency, rate limits, consent frequency); see `createStore`. */
  store: Store;
  /** The client the proxy forwards with; see `createUpstream`. */
  upstream: Upstream;
  metrics: Metrics;
  /** The concurrency pools towards the core (`upstream_limits`), kept across reloads. */
  limits: LimiterPools;
  /** The circuit breakers towards the core (`upstream_circuit`), kept across reloads. */
  breakers: Breakers;
}
