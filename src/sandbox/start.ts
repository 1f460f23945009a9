/**
 * `deno task start`: the sandbox bank on 127.0.0.1 and SANDBOX_PORT (default 8081), and the
 * gateway (main.ts) in front of it. The only way the sandbox runs next to the gateway: the
 * container, `serve.ts` and a compiled binary never start it. The sandbox's SCA pages and its
 * controls (`/sandbox/...`) are on the sandbox's own port (see src/sandbox/serve.ts).
 *
 * UPSTREAM_URL is the sandbox's here, whatever the environment says: a set one is replaced, with a
 * notice (run main.ts to put the gateway in front of another core).
 */
import { main } from "../../main.ts";
import { logToStderr } from "../lib/log.ts";
import { sandboxEnvOrExit, serveSandbox } from "./serve.ts";

const { port, ...options } = sandboxEnvOrExit();
let sandbox: ReturnType<typeof serveSandbox>;
try {
  sandbox = serveSandbox(port, options);
} catch (error) {
  if (!(error instanceof Deno.errors.AddrInUse)) throw error;
  logToStderr("error", {
    msg: "the sandbox bank cannot start",
    problems: [
      `Port ${port} on "127.0.0.1" is in use (another process listens on it): set SANDBOX_PORT to a free port`,
    ],
    port,
    variable: "SANDBOX_PORT",
  });
  Deno.exit(1);
}
const given = Deno.env.get("UPSTREAM_URL");
if (given && given !== sandbox.url) {
  logToStderr("info", {
    level: "warn",
    msg:
      `UPSTREAM_URL "${given}" is replaced by the sandbox bank's ${sandbox.url}: deno task start always serves the sandbox; run main.ts for another core`,
    variable: "UPSTREAM_URL",
  });
}
Deno.env.set("UPSTREAM_URL", sandbox.url);
console.error(`sandbox bank on ${sandbox.url} (SCA pages and /sandbox/ controls)`);
const code = await main(Deno.args);
if (code !== undefined) Deno.exit(code);
