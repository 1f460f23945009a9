/**
 * `deno task start`: the sandbox bank on 127.0.0.1 and SANDBOX_PORT (default 8081), and the
 * gateway (main.ts) in front of it. The only way the sandbox runs next to the gateway: the
 * container, `serve.ts` and a compiled binary never start it. The sandbox's SCA pages and its
 * controls (`/sandbox/...`) are on the sandbox's own port (see src/sandbox/serve.ts).
 */
import { main } from "../../main.ts";
import { sandboxEnvOrExit, serveSandbox } from "./serve.ts";

const { port, ...options } = sandboxEnvOrExit();
const sandbox = serveSandbox(port, options);
Deno.env.set("UPSTREAM_URL", sandbox.url);
console.error(`sandbox bank on ${sandbox.url} (SCA pages and /sandbox/ controls)`);
const code = await main(Deno.args);
if (code !== undefined) Deno.exit(code);
