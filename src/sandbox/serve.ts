/**
 * Serving the sandbox bank over real HTTP on 127.0.0.1, next to the gateway (`deno task start`)
 * or alone (`deno task sandbox`), configured by environment variables:
 *
 * - `SANDBOX_PORT` (default 8081);
 * - `SANDBOX_SCA_ORIGIN`: origin of the SCA pages in `scaRedirect` links (default
 *   `http://localhost:<port>`: the sandbox itself, named otherwise than the gateway's upstream URL
 *   `http://127.0.0.1:<port>`, whose links the gateway makes relative);
 * - `SANDBOX_DECOUPLED_DELAY_MS`: delay of decoupled SCA (default 5000);
 * - `SANDBOX_CA_DIR`: the sandbox CA's directory, whose certificate and CRL `/sandbox/ca/` serves
 *   (default `data/sandbox-ca`, where `deno task tpp:certificate` makes it).
 */
import { z } from "zod";
import { createSandbox, type SandboxOptions } from "./mod.ts";
import { port } from "../lib/fields.ts";
import { EnvError, readEnv, unsetWhenEmpty } from "../policy/env.ts";

/** Options of {@link serveSandbox}. */
export interface ServeOptions extends Omit<SandboxOptions, "scaOrigin"> {
  /** Origin of the SCA pages; a function is given the port the sandbox listens on. */
  scaOrigin?: string | ((port: number) => string);
}

/** The sandbox's own origin as a browser reaches it, under another name than `127.0.0.1`. */
export function localOrigin(port: number): string {
  return `http://localhost:${port}`;
}

/** Starts the sandbox bank on `port` (0: a free port) and returns its server and base URL. */
export function serveSandbox(
  port = 0,
  options: ServeOptions = {},
): { server: Deno.HttpServer<Deno.NetAddr>; url: string } {
  const { scaOrigin = localOrigin, ...rest } = options;
  const app = createSandbox({
    ...rest,
    scaOrigin: typeof scaOrigin === "function" ? () => scaOrigin(server.addr.port) : scaOrigin,
  });
  const server = Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, app.fetch);
  return { server, url: `http://127.0.0.1:${server.addr.port}` };
}

/** The sandbox's environment variables, each with its default and its form. */
const SANDBOX_ENV = z.object({
  SANDBOX_PORT: unsetWhenEmpty(port({ anyFree: true }).default(8081)),
  SANDBOX_SCA_ORIGIN: unsetWhenEmpty(
    z.string().refine(
      (origin) => URL.parse(origin)?.origin === origin.replace(/\/+$/, ""),
      "must be an origin like http://localhost:8081",
    ).optional(),
  ),
  SANDBOX_DECOUPLED_DELAY_MS: unsetWhenEmpty(
    z.string().regex(/^[0-9]{1,8}$/, "must be an integer from 0 to 86400000").default("5000"),
  ).transform(Number).pipe(z.int().max(86_400_000, "must be an integer from 0 to 86400000")),
  SANDBOX_CA_DIR: unsetWhenEmpty(z.string().optional()),
});

/** The port and options the environment asks for; throws `EnvError` naming a malformed value. */
export function sandboxEnv(
  env: (name: string) => string | undefined = (name) => Deno.env.get(name),
): { port: number } & ServeOptions {
  const values = readEnv(SANDBOX_ENV, env);
  return {
    port: values.SANDBOX_PORT,
    scaOrigin: values.SANDBOX_SCA_ORIGIN ?? localOrigin,
    decoupledDelayMs: values.SANDBOX_DECOUPLED_DELAY_MS,
    ...(values.SANDBOX_CA_DIR ? { caDir: values.SANDBOX_CA_DIR } : {}),
  };
}

/** {@link sandboxEnv}, or exit 1 with the message that names the variable (for the entry points). */
export function sandboxEnvOrExit(): { port: number } & ServeOptions {
  try {
    return sandboxEnv();
  } catch (error) {
    if (!(error instanceof EnvError)) throw error;
    console.error(error.message);
    Deno.exit(1);
  }
}
