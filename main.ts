/**
 * xs2a-edge: read the configuration, build and serve the gateway, wire the signals.
 *
 * Policy file: `--policy <file>`, else GATEWAY_POLICY, else config/policy.yaml. Without
 * UPSTREAM_URL, the built-in sandbox bank is started on its own port and the gateway points at it.
 * SIGHUP (and a change of the policy file) reloads the policy; SIGTERM and SIGINT shut down
 * gracefully.
 */
import { PolicyError } from "./src/policy.ts";
import { serveGateway } from "./src/server.ts";
import { defaultServices } from "./src/services.ts";

const flag = Deno.args.indexOf("--policy");
const file = (flag >= 0 ? Deno.args[flag + 1] : undefined) ?? Deno.env.get("GATEWAY_POLICY") ??
  "config/policy.yaml";
// Loaded only when it serves: a gateway in front of a real bank never holds the sandbox's code
// and seed data.
const sandbox = Deno.env.get("UPSTREAM_URL")
  ? undefined
  : (await import("./src/sandbox_server.ts")).serveSandbox(
    Number(Deno.env.get("SANDBOX_PORT") ?? 8081),
  );
if (sandbox) {
  Deno.env.set("UPSTREAM_URL", sandbox.url);
  console.error(`sandbox bank on ${sandbox.url}`);
}

try {
  const hostname = Deno.env.get("HOST") ?? "127.0.0.1";
  const server = await serveGateway({
    file,
    hostname,
    port: Number(Deno.env.get("PORT") ?? 8080),
    services: defaultServices(),
    watch: Deno.env.get("GATEWAY_WATCH") !== "false",
  });
  console.error(`xs2a-edge on http://${hostname}:${server.addr.port} (policy ${file})`);
  Deno.addSignalListener("SIGHUP", () => server.reload());
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    Deno.addSignalListener(signal, async () => {
      await server.shutdown(Number(Deno.env.get("SHUTDOWN_GRACE_MS") ?? 10_000));
      await sandbox?.server.shutdown();
      Deno.exit(0);
    });
  }
} catch (error) {
  if (!(error instanceof PolicyError)) throw error;
  console.error(error.message);
  Deno.exit(1);
}
