/**
 * Serves the sandbox bank on 127.0.0.1 and port `SANDBOX_PORT` (default 8081).
 */
import { createSandbox } from "./mod.ts";
import { readEnv, sandboxEnv } from "../policy/env.ts";

const port = readEnv(sandboxEnv).SANDBOX_PORT;

Deno.serve({
  hostname: "127.0.0.1",
  port,
  onListen: ({ hostname, port }) =>
    console.log(`Sandbox bank listening on http://${hostname}:${port}`),
}, createSandbox().fetch);
