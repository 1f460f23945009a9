/**
 * The entry point for `deno serve` (and Deno Deploy): the same gateway as main.ts, exported as a
 * `fetch` handler, without file watching, signals or the sandbox bank. The policy file comes from
 * GATEWAY_POLICY (a file of the repository or image), secrets and addresses from the environment.
 *
 *   deno serve --parallel --allow-net --allow-env --allow-read --port 8080 serve.ts
 *
 * `--parallel` runs one gateway per core; state that must be exact across them (idempotency, rate
 * limits, consent frequency) must then live in Redis, not in the memory store.
 */
import { PIPELINE } from "./middleware/mod.ts";
import { createApp } from "./src/http/app.ts";
import { loadPolicy } from "./src/policy/load.ts";
import { defaultServices, withPolicyClients } from "./src/core/services.ts";
import { gatewayEnv, readEnv } from "./src/policy/env.ts";

const policy = await loadPolicy(
  readEnv(gatewayEnv.pick({ GATEWAY_POLICY: true })).GATEWAY_POLICY,
  PIPELINE,
);
// The store and the upstream client the policy names: under --parallel, exact shared state needs
// the policy's Redis, never a memory store per worker.
const app = createApp({ policy, services: await withPolicyClients(policy, defaultServices()) });

export default { fetch: app.fetch } satisfies Deno.ServeDefaultExport;
