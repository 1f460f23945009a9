/**
 * The gateway's own endpoints beside the interface: liveness, readiness (`readiness.ts`: every
 * dependency's state, ready, degraded or not ready) and the Prometheus metrics behind a bearer
 * token, the store's capacity and warnings among them.
 */
import type { Hono } from "hono";
import type { GatewayEnv } from "../core/check.ts";
import type { Services } from "../core/services.ts";
import type { Policy } from "../policy/load.ts";
import { mergeSnapshots, type MetricsSnapshot, renderSnapshot } from "../lib/metrics.ts";
import { readinessProbe } from "./readiness.ts";

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
  // The store's own account (read without a round trip): a full memory store, a forgetful Redis.
  const condition = () => store.condition?.();
  metrics.storeBytes.track(() => condition()?.capacity?.bytes);
  metrics.storeMaxEntries.track(() => condition()?.capacity?.max_entries);
  metrics.storeMaxBytes.track(() => condition()?.capacity?.max_bytes);
  metrics.storeFull.track(() => condition()?.capacity?.refused);
  metrics.storeWarnings.track(() => condition()?.warnings.length);
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

/**
 * The handler of the separate metrics port (`metrics.port`): `/metrics` only, and behind the
 * same bearer token as on the main port when the policy sets one (a port the operator thinks
 * internal is often reachable from more places than intended).
 */
export function metricsPortHandler(
  token: string | undefined,
  services: Services,
): (request: Request) => Response | Promise<Response> {
  return (request) => {
    if (new URL(request.url).pathname !== "/metrics") {
      return new Response("Not found", { status: 404 });
    }
    if (token && !sameSecret(request.headers.get("authorization") ?? "", `Bearer ${token}`)) {
      return new Response("Unauthorized", {
        status: 401,
        headers: { "www-authenticate": "Bearer" },
      });
    }
    return metricsResponse(services);
  };
}

/** Registers `/healthz`, `/readyz` and (with a token in the policy) `/metrics`. */
export function healthEndpoints(app: Hono<GatewayEnv>, policy: Policy, services: Services): void {
  app.get("/healthz", (c) => c.json({ status: "up" }));
  const readiness = readinessProbe(policy, services);
  app.get("/readyz", async (c) => {
    const result = await readiness();
    // Degraded is served (200): its dependencies are shared, another instance fares no better.
    const status = result.status === "not ready" ? 503 : 200;
    return c.json(result, status, { "cache-control": "no-store" });
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
