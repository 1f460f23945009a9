/**
 * Serving the sandbox bank over real HTTP on 127.0.0.1, next to the gateway (`deno task start`)
 * or alone (`deno task sandbox`), configured by environment variables:
 *
 * - `SANDBOX_PORT` (default 8081);
 * - `SANDBOX_SCA_ORIGIN`: origin of the SCA pages in `scaRedirect` links (default
 *   `http://localhost:<port>`: the sandbox itself, named otherwise than the gateway's upstream URL
 *   `http://127.0.0.1:<port>`, whose links the gateway makes relative);
 * - `SANDBOX_DECOUPLED_DELAY_MS`: delay of decoupled SCA (default 5000).
 */
import { createSandbox, type SandboxOptions } from "./mod.ts";

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

/** The port and options the environment asks for; throws on a malformed value. */
export function sandboxEnv(
  env: (name: string) => string | undefined = (name) => Deno.env.get(name),
): { port: number } & ServeOptions {
  const port = integer(env, { name: "SANDBOX_PORT", fallback: 8081, max: 65535 });
  const delay = integer(env, {
    name: "SANDBOX_DECOUPLED_DELAY_MS",
    fallback: 5000,
    max: 86_400_000,
  });
  const origin = env("SANDBOX_SCA_ORIGIN");
  if (
    origin !== undefined && origin !== "" &&
    URL.parse(origin)?.origin !== origin.replace(/\/+$/, "")
  ) {
    throw new Error(
      `Environment variable "SANDBOX_SCA_ORIGIN" must be an origin like http://localhost:8081, got "${origin}"`,
    );
  }
  return { port, scaOrigin: origin || localOrigin, decoupledDelayMs: delay };
}

function integer(
  env: (name: string) => string | undefined,
  options: { name: string; fallback: number; max: number },
): number {
  const raw = env(options.name);
  if (raw === undefined || raw === "") return options.fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value > options.max) {
    throw new Error(
      `Environment variable "${options.name}" must be an integer from 0 to ${options.max}, got "${raw}"`,
    );
  }
  return value;
}
