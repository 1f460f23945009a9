/**
 * `policy:check --probe`: builds the gateway the policy describes (its store connected, its
 * chains built) without serving, asks its readiness once, as `/readyz` would, and prints each
 * dependency: a Redis that may forget, an unreachable JWKS or register is found before start-up.
 */
import { defaultServices, withPolicyClients } from "../policy/services.ts";
import { createApp } from "../http/app.ts";
import { readinessProbe } from "../http/readiness.ts";
import { memoryLogger } from "../lib/log.ts";
import type { Policy } from "../policy/load.ts";

/** Probes the policy's dependencies and prints them; 1 when the gateway would not be ready. */
export async function probeDependencies(policy: Policy): Promise<number> {
  const services = await withPolicyClients(policy, defaultServices({ log: memoryLogger() }));
  try {
    createApp({ policy, services });
    const result = await readinessProbe(policy, services)();
    const { upstream, store, circuit, ...others } = result.dependencies;
    console.log(`probe: ${result.status}`);
    console.log(`  upstream: ${upstream.state} (${upstream.ms} ms)${tail(upstream.error)}`);
    const settings = Object.entries(store.settings ?? {}).map(([k, v]) => `${k} ${v}`).join(", ");
    console.log(
      `  store ${store.kind}: ${store.state}${tail(store.error)}${settings ? `; ${settings}` : ""}${
        store.settings_unknown ? `; settings unknown: ${store.settings_unknown}` : ""
      }`,
    );
    if (circuit.state !== "none") console.log(`  circuit: ${circuit.state}`);
    for (const [name, found] of Object.entries(others)) {
      for (const source of [found].flat()) {
        console.log(`  ${name} ${source.source}: ${source.state}${tail(source.error)}`);
      }
    }
    for (const problem of result.problems ?? []) console.log(`warning: ${problem}`);
    return result.status === "not ready" ? 1 : 0;
  } finally {
    await services.store.close();
    services.upstream.close();
  }
}

function tail(error: string | undefined): string {
  return error ? ` (${error})` : "";
}
