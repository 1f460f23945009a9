/**
 * xs2a-edge: load the policy file, build the app, serve. Without UPSTREAM_URL, the built-in
 * sandbox bank is started on its own port and the gateway points at it.
 */
import { loadPolicy, PolicyError } from "./src/policy.ts";
import { createApp } from "./src/app.ts";
import { defaultServices, jsonLogger } from "./src/services.ts";
import { createStore } from "./src/store/mod.ts";
import { serveSandbox } from "./src/sandbox_server.ts";

const file = Deno.env.get("GATEWAY_POLICY") ?? "config/policy.yaml";
if (!Deno.env.get("UPSTREAM_URL")) {
  const sandbox = serveSandbox(Number(Deno.env.get("SANDBOX_PORT") ?? 8081));
  Deno.env.set("UPSTREAM_URL", sandbox.url);
  console.error(`sandbox bank on ${sandbox.url}`);
}
try {
  const policy = await loadPolicy(file);
  const log = jsonLogger();
  const store = await createStore(policy.store, { log });
  const app = createApp({ policy, services: defaultServices({ log, store }) });
  const hostname = Deno.env.get("HOST") ?? "127.0.0.1";
  const port = Number(Deno.env.get("PORT") ?? 8080);
  Deno.serve({
    hostname,
    port,
    onListen: () => console.error(`xs2a-edge on http://${hostname}:${port} (policy ${file})`),
  }, app.fetch);
} catch (error) {
  if (!(error instanceof PolicyError)) throw error;
  console.error(error.message);
  Deno.exit(1);
}
