/**
 * `deno task start`: the sandbox bank on 127.0.0.1 and SANDBOX_PORT (default 8081), and the
 * gateway (main.ts) in front of it. The only way the sandbox runs next to the gateway: the
 * container, `serve.ts` and a compiled binary never start it.
 */
import { main } from "../../main.ts";
import { serveSandbox } from "./serve.ts";
import { EnvError, readEnv, sandboxEnv } from "../policy/env.ts";

let port: number;
try {
  port = readEnv(sandboxEnv).SANDBOX_PORT;
} catch (error) {
  if (!(error instanceof EnvError)) throw error;
  console.error(error.message);
  Deno.exit(1);
}
const sandbox = serveSandbox(port);
Deno.env.set("UPSTREAM_URL", sandbox.url);
console.error(`sandbox bank on ${sandbox.url}`);
const code = await main(Deno.args);
if (code !== undefined) Deno.exit(code);
