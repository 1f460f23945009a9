/**
 * `deno task start`: the sandbox bank on 127.0.0.1 and SANDBOX_PORT (default 8081), and the
 * gateway (main.ts) in front of it. The only way the sandbox runs next to the gateway: the
 * container, `serve.ts` and a compiled binary never start it.
 */
import { main } from "../../main.ts";
import { serveSandbox } from "./serve.ts";

const sandbox = serveSandbox(Number(Deno.env.get("SANDBOX_PORT") ?? 8081));
Deno.env.set("UPSTREAM_URL", sandbox.url);
console.error(`sandbox bank on ${sandbox.url}`);
const code = await main(Deno.args);
if (code !== undefined) Deno.exit(code);
