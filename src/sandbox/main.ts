/**
 * Serves the sandbox bank on 127.0.0.1 and port `SANDBOX_PORT` (default 8081).
 */
import { createSandbox } from "./mod.ts";

const raw = Deno.env.get("SANDBOX_PORT") ?? "8081";
const port = Number(raw);
if (!/^\d+$/.test(raw) || port > 65535) {
  throw new Error(`Environment variable "SANDBOX_PORT" must be a port number, got "${raw}"`);
}

Deno.serve({
  hostname: "127.0.0.1",
  port,
  onListen: ({ hostname, port }) =>
    console.log(`Sandbox bank listening on http://${hostname}:${port}`),
}, createSandbox().fetch);
