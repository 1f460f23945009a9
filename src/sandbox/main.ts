/**
 * `deno task sandbox`: the sandbox bank alone on 127.0.0.1, configured as src/sandbox/serve.ts
 * describes (SANDBOX_PORT, SANDBOX_SCA_ORIGIN, SANDBOX_DECOUPLED_DELAY_MS).
 */
import { sandboxEnvOrExit, serveSandbox } from "./serve.ts";

const { port, ...options } = sandboxEnvOrExit();
const sandbox = serveSandbox(port, options);
console.log(`Sandbox bank listening on ${sandbox.url}`);
