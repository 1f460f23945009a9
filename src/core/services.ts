/**
 * The dependencies the app is built with (fetch, clock, log, store), so that tests pass their own.
 */
import { MemoryStore } from "../store/memory.ts";
import { createStore } from "../store/mod.ts";
import { type Store } from "../store/types.ts";
import { fetchUpstream } from "../upstream/fetch.ts";
import { createUpstream, type Upstream } from "../upstream/mod.ts";
import { LimiterPools } from "../upstream/limiter.ts";
import { Breakers } from "../upstream/breaker.ts";
import type { PolicySections } from "../policy/sections.ts";

import { createMetrics, type Metrics } from "../lib/metrics.ts";
import { jsonLogger, type Logger } from "../lib/log.ts";

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

/** The real services. */
export function defaultServices(overrides: Partial<Services> = {}): Services {
  const services: Services = {
    fetch: globalThis.fetch,
    log: overrides.log ?? jsonLogger(),
    now: Date.now,
    metrics: createMetrics(),
    limits: new LimiterPools(),
    breakers: new Breakers(),
    ...overrides,
    store: overrides.store ?? new MemoryStore(),
    upstream: overrides.upstream ?? fetchUpstream(overrides.fetch ?? globalThis.fetch),
  };
  const { breakers, metrics, log } = services;
  // Every change of a breaker's state is counted and logged (an opening is what operators page on).
  breakers.onChange ??= (entry, from, to) => {
    metrics.circuitTransitions.inc({ circuit: entry.name, to });
    const line = { msg: `circuit ${to}`, circuit: entry.name, from };
    if (to === "open") log.error(line);
    else log.info({ level: "warn", ...line });
  };
  return services;
}

/**
 * The services with the store and the upstream client the policy's sections name, for a server
 * (main.ts) or a `deno serve` worker alike. Both live as long as it: a reload keeps the shared
 * state and the connections (a changed `store` or `upstream.client` takes effect at the next start).
 */
export async function withPolicyClients(
  sections: Pick<PolicySections, "store" | "upstream">,
  services: Services,
): Promise<Services> {
  const store = await createStore(sections.store, { log: services.log });
  return { ...services, store, upstream: createUpstream(sections.upstream, services.fetch) };
}
