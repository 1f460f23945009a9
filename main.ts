/**
 * xs2a-edge: read the configuration, build and serve the gateway, wire the signals.
 *
 * `main.ts [--policy <file>]` serves the gateway in front of UPSTREAM_URL (policy file: `--policy`,
 * else GATEWAY_POLICY, else config/policy.yaml). SIGHUP (and a change of the policy file) reloads
 * the policy; SIGTERM and SIGINT shut down gracefully. The sandbox bank never starts here: `deno
 * task start` runs `src/sandbox/start.ts`, which serves it and then this gateway in front of it.
 *
 * `main.ts policy:check|policy:explain|policy:schema ...` are the policy tools, with the same
 * checks the gateway runs; `main.ts openapi [file]` prints the contract the policy serves.
 */
import { PIPELINE } from "./middleware/mod.ts";
import { PolicyError } from "./src/policy/load.ts";
import { EnvError, gatewayEnv, readEnv } from "./src/policy/env.ts";
import { serveGateway } from "./src/http/server.ts";
import { ListenError } from "./src/http/listener.ts";
import { defaultServices } from "./src/policy/services.ts";
import type { Pipeline } from "./src/core/chain.ts";
import { logToStderr } from "./src/lib/log.ts";
import { setDefaultStoreKind } from "./src/sections/sections.ts";
import { StoreUnavailableError } from "./src/store/types.ts";

type Command = (args: string[], pipeline: Pipeline) => Promise<number>;

/** The policy tools, imported when one is asked for (a serving gateway never loads them). */
const COMMANDS: Record<string, () => Promise<Command>> = {
  "policy:check": async () => (await import("./src/cli/policy_check.ts")).policyCheck,
  "policy:explain": async () => (await import("./src/cli/policy_explain.ts")).policyExplain,
  "policy:schema": async () => (await import("./src/cli/policy_schema.ts")).policySchemaFile,
  "policy:test": async () => (await import("./src/cli/policy_test.ts")).policyTest,
  "policy:diff": async () => (await import("./src/cli/policy_diff.ts")).policyDiff,
  "policy:sign": async () => (await import("./src/cli/policy_sign.ts")).policySign,
  openapi: async () => (await import("./src/cli/openapi.ts")).openApi,
};

/** Serves the gateway (or runs a policy tool); resolves to an exit code when it should exit. */
export async function main(args: string[]): Promise<number | undefined> {
  const command = Object.hasOwn(COMMANDS, args[0] ?? "") ? COMMANDS[args[0]] : undefined;
  if (command) return await (await command())(args.slice(1), PIPELINE);
  const flag = args.indexOf("--policy");
  let file = flag >= 0 ? args[flag + 1] : undefined;
  try {
    const env = readEnv(gatewayEnv);
    file ??= env.GATEWAY_POLICY;
    const hostname = env.HOST;
    const server = await serveGateway({
      file,
      pipeline: PIPELINE,
      hostname,
      port: env.PORT,
      services: defaultServices(),
      watch: env.GATEWAY_WATCH,
    });
    logToStderr("info", {
      msg: `xs2a-edge on http://${hostname}:${server.addr.port} (policy ${file})`,
    });
    Deno.addSignalListener("SIGHUP", () => server.reload());
    for (const signal of ["SIGTERM", "SIGINT"] as const) {
      Deno.addSignalListener(signal, async () => {
        await server.shutdown(env.SHUTDOWN_GRACE_MS);
        logToStderr("info", { msg: `xs2a-edge stopped (${signal})` });
        Deno.exit(0);
      });
    }
    return undefined;
  } catch (error) {
    if (error instanceof ListenError) {
      // The one port the operator sets: named with its variable (PORT, or the policy's metrics.port).
      const variable = error.listener === "gateway" ? "PORT" : "metrics.port";
      logToStderr("error", {
        msg: "the gateway cannot start",
        file,
        problems: [`${error.message}: set ${variable} to a free port`],
        port: error.port,
        variable,
      });
      return 1;
    }
    if (error instanceof StoreUnavailableError) {
      // A store file it cannot open (its directory not writable, not allowed): named, no stack.
      logToStderr("error", { msg: "the gateway cannot start", file, problems: [error.message] });
      return 1;
    }
    if (!(error instanceof PolicyError || error instanceof EnvError)) throw error;
    logToStderr("error", { msg: "the gateway cannot start", file, problems: error.problems });
    return 1;
  }
}

/** An uncaught failure: logged as a JSON line like every other, then the process ends. */
function fatal(event: ErrorEvent | PromiseRejectionEvent) {
  event.preventDefault();
  const error = event instanceof ErrorEvent ? event.error : event.reason;
  logToStderr("error", {
    msg: "uncaught error; the process ends",
    error: error instanceof Error ? (error.stack ?? error.message) : String(error),
  });
  Deno.exit(1);
}

if (import.meta.main) {
  globalThis.addEventListener("error", fatal);
  globalThis.addEventListener("unhandledrejection", fatal);
  // A policy that names no store gets a durable one here (the container, the binary): a payment
  // executed before a restart is never executed again. `deno task start` and tests keep memory.
  setDefaultStoreKind("sqlite");
  const code = await main(Deno.args);
  if (code !== undefined) Deno.exit(code);
}
