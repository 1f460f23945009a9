/**
 * The gateway's own endpoints beside the interface: liveness, readiness (the upstream reachable)
 * and the Prometheus metrics behind a bearer token.
 */
import type { Hono } from "hono";
import type { GatewayContext, GatewayEnv } from "../core/check.ts";
import type { Services } from "../core/services.ts";
import type { Policy } from "../policy/load.ts";

async function readiness(c: GatewayContext, policy: Policy, services: Services) {
  try {
    const response = await services.fetch(policy.upstream.url, {
      method: "GET",
      signal: AbortSignal.timeout(2000),
    });
    await response.body?.cancel();
    return c.json({ status: "ready" });
  } catch {
    return c.json({ status: "upstream unreachable" }, 503);
  }
}

/** Compares two secrets in time independent of where they differ. */
function sameSecret(given: string, expected: string): boolean {
  const a = new TextEncoder().encode(given);
  const b = new TextEncoder().encode(expected);
  let diff = a.length ^ b.length;
  for (let i = 0; i < b.length; i++) diff |= (a[i] ?? 0) ^ b[i];
  return diff === 0;
}

/** The Prometheus exposition of the services' metrics. */
export function metricsResponse(services: Services): Response {
  const store = services.store.stats;
  const text = services.metrics.render() +
    "# HELP xs2a_store_round_trips_total Requests sent to the shared-state store\n" +
    `# TYPE xs2a_store_round_trips_total counter\nxs2a_store_round_trips_total ${store.roundTrips}\n` +
    "# HELP xs2a_store_fail_open_total Requests let through while the store was unavailable\n" +
    `# TYPE xs2a_store_fail_open_total counter\nxs2a_store_fail_open_total ${store.failOpen}\n`;
  return new Response(text, {
    headers: { "content-type": "text/plain; version=0.0.4", "cache-control": "no-store" },
  });
}

/** Registers `/healthz`, `/readyz` and (with a token in the policy) `/metrics`. */
export function healthEndpoints(app: Hono<GatewayEnv>, policy: Policy, services: Services): void {
  app.get("/healthz", (c) => c.json({ status: "up" }));
  app.get("/readyz", (c) => readiness(c, policy, services));
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
