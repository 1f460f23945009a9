/**
 * The gateway's own endpoints beside the interface: liveness, readiness and the Prometheus
 * metrics behind a bearer token.
 *
 * Readiness names each dependency's state: the upstream (reachable), the store (it counts only
 * when a check fails closed without it: a fail-open check serves through an outage), and the
 * circuit breaker (open: not ready). Probes are cached: at most one per `readiness.interval`,
 * shared by every caller, so that a load balancer polling each instance never loads the core.
 */
import type { Hono } from "hono";
import type { GatewayEnv } from "../core/check.ts";
import type { Services } from "../core/services.ts";
import type { Policy } from "../policy/load.ts";
import type { StoreNodeState } from "../store/types.ts";
import { withDeadline } from "../lib/deadline.ts";
import { mergeSnapshots, type MetricsSnapshot, renderSnapshot } from "../lib/metrics.ts";

/** The state of one dependency. */
export type DependencyState = "up" | "down";

/**
 * The circuit breaker's state towards the upstream (`upstream_circuit`): `none` without a breaker
 * of the origin, else the worst of them; `open` makes the instance not ready.
 */
export type CircuitState = "none" | "closed" | "half-open" | "open";

/** What `/readyz` answers (its JSON body). */
export interface Readiness {
  status: "ready" | "not ready";
  /** When the dependencies were probed (ISO 8601). */
  checked: string;
  dependencies: {
    upstream: { state: DependencyState; ms: number; error?: string };
    store: {
      state: DependencyState;
      kind: string;
      /** Checks that answer 503 while the store is down: the store decides readiness. */
      required_by: string[];
      error?: string;
      /** Each master of a Redis Cluster (every one is probed: each holds some callers' slots). */
      nodes?: StoreNodeState[];
    };
    circuit: { state: CircuitState };
  };
}

/** A key no check uses: the store probe deletes it (one round trip, nothing kept). */
const PROBE_KEY = "health:readyz";

/** Checks in force somewhere in the policy with `fail: closed` (they need the store to serve). */
export function closedChecks(policy: Policy): string[] {
  const keys = new Set<string>();
  for (const { options } of policy.operations) {
    for (const [key, value] of Object.entries(options)) {
      if (value.fail === "closed" && value.mode !== "off") keys.add(key);
    }
  }
  return [...keys].sort();
}

function message(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, 200);
}

/** The origin's circuit breakers' state (breakers of one operation do not decide readiness). */
function circuitState(services: Services): CircuitState {
  return services.breakers.originState(services.now());
}

async function probeUpstream(policy: Policy, services: Services) {
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  try {
    const response = await services.fetch(policy.upstream.url, {
      method: "GET",
      signal: AbortSignal.timeout(policy.readiness.timeout),
    });
    await response.body?.cancel();
    return { state: "up" as const, ms: ms() };
  } catch (error) {
    return { state: "down" as const, ms: ms(), error: message(error) };
  }
}

async function probeStore(policy: Policy, services: Services, requiredBy: string[]) {
  const { store } = services;
  try {
    const ms = policy.store.timeout;
    const late = () => new Error(`No answer within ${ms} ms`);
    if (store.probe) {
      // Several nodes (a cluster's masters): down when any is, since its callers get 503.
      const nodes = await withDeadline(store.probe(), 2 * ms, late);
      const down = nodes.filter((n) => n.state === "down").map((n) => n.node);
      return {
        state: down.length === 0 ? "up" as const : "down" as const,
        kind: store.kind,
        required_by: requiredBy,
        ...(down.length > 0 ? { error: downText(down) } : {}),
        nodes,
      };
    }
    await withDeadline(store.delete(PROBE_KEY), ms, late);
    return { state: "up" as const, kind: store.kind, required_by: requiredBy };
  } catch (error) {
    return {
      state: "down" as const,
      kind: store.kind,
      required_by: requiredBy,
      error: message(error),
    };
  }
}

/** `Node "a" is down`, `Nodes "a", "b" are down`. */
function downText(nodes: string[]): string {
  const named = nodes.map((n) => `"${n}"`).join(", ");
  return nodes.length === 1 ? `Node ${named} is down` : `Nodes ${named} are down`;
}

/** Probes every dependency once, now. */
async function probe(policy: Policy, services: Services, requiredBy: string[]): Promise<Readiness> {
  const [upstream, store] = await Promise.all([
    probeUpstream(policy, services),
    probeStore(policy, services, requiredBy),
  ]);
  const circuit = { state: circuitState(services) };
  const ready = upstream.state === "up" &&
    (store.state === "up" || requiredBy.length === 0) &&
    circuit.state !== "open";
  return {
    status: ready ? "ready" : "not ready",
    checked: new Date(services.now()).toISOString(),
    dependencies: { upstream, store, circuit },
  };
}

/**
 * The readiness of a policy's gateway: probed at most once per `readiness.interval` (from the
 * start of one probe to the next), callers during a probe share it.
 */
export function readinessProbe(policy: Policy, services: Services): () => Promise<Readiness> {
  const requiredBy = closedChecks(policy);
  const interval = policy.readiness.interval;
  let last: { at: number; result: Readiness } | undefined;
  let running: Promise<Readiness> | undefined;
  return () => {
    if (last && services.now() - last.at < interval) return Promise.resolve(last.result);
    if (!running) {
      const at = services.now();
      running = probe(policy, services, requiredBy).then((result) => {
        last = { at, result };
        return result;
      }).finally(() => running = undefined);
    }
    return running;
  };
}

/** Compares two secrets in time independent of where they differ. */
function sameSecret(given: string, expected: string): boolean {
  const a = new TextEncoder().encode(given);
  const b = new TextEncoder().encode(expected);
  let diff = a.length ^ b.length;
  for (let i = 0; i < b.length; i++) diff |= (a[i] ?? 0) ^ b[i];
  return diff === 0;
}

/** This worker's metrics as plain data, the store's own counters included. */
export function localSnapshot(services: Services): MetricsSnapshot {
  const { metrics, store } = services;
  metrics.storeRoundTrips.track(() => store.stats.roundTrips);
  metrics.storeFailOpen.track(() => store.stats.failOpen);
  metrics.circuitsOpen.track(() => services.breakers.openCount(services.now()));
  const pools = () => [...services.limits.gauges()];
  metrics.upstreamLimit.track(() => pools().map(([pool, g]) => [{ pool }, g.limit]));
  metrics.upstreamInFlight.track(() => pools().map(([pool, g]) => [{ pool }, g.inFlight]));
  metrics.upstreamQueued.track(() => pools().map(([pool, g]) => [{ pool }, g.queued]));
  return metrics.snapshot();
}

/**
 * The Prometheus exposition of the services' metrics: the sum over every worker of the process
 * (`deno serve --parallel`), whichever worker the scrape reached, or this one's alone.
 */
export async function metricsResponse(services: Services): Promise<Response> {
  const workers = services.metrics.workers;
  const snapshots = workers ? await workers() : [localSnapshot(services)];
  const text = renderSnapshot([...mergeSnapshots(snapshots), {
    type: "gauge",
    name: "xs2a_workers",
    help: "Workers whose metrics this scrape adds up (deno serve --parallel runs several)",
    value: snapshots.length,
  }]);
  return new Response(text, {
    headers: { "content-type": "text/plain; version=0.0.4", "cache-control": "no-store" },
  });
}

/** Registers `/healthz`, `/readyz` and (with a token in the policy) `/metrics`. */
export function healthEndpoints(app: Hono<GatewayEnv>, policy: Policy, services: Services): void {
  app.get("/healthz", (c) => c.json({ status: "up" }));
  const readiness = readinessProbe(policy, services);
  app.get("/readyz", async (c) => {
    const result = await readiness();
    return c.json(result, result.status === "ready" ? 200 : 503, { "cache-control": "no-store" });
  });
  const token = policy.metrics.token;
  if (token) {
    app.get(
      "/metrics",
      (c) =>
        sameSecret(c.req.header("authorization") ?? "", `Bearer ${token}`)
          ? metricsResponse(services)
          : c.text("Unauthorized", 401, { "www-authenticate": "Bearer" }),
    );
  }
}
