/**
 * The services a gateway is built with (`Services`, src/core/services.ts): the real ones, and those
 * with the store and the upstream client a policy's sections name. Building them needs every store
 * and upstream client, which the kernel that hands the services to the checks does not.
 */
import { MemoryStore } from "../store/memory.ts";
import { createStore } from "../store/mod.ts";
import { fetchUpstream } from "../upstream/fetch.ts";
import { createUpstream } from "../upstream/mod.ts";
import { LimiterPools } from "../upstream/limiter.ts";
import { Breakers } from "../upstream/breakers.ts";
import type { Services } from "../core/services.ts";
import type { PolicySections } from "../sections/sections.ts";
import { createMetrics } from "../lib/metrics.ts";
import { jsonLogger } from "../lib/log.ts";

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
