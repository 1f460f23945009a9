/**
 * Serving the sandbox bank next to the gateway, over real HTTP on 127.0.0.1.
 */
import { createSandbox } from "./mod.ts";

/** Starts the sandbox bank on `port` (0: a free port) and returns its server and base URL. */
export function serveSandbox(port = 0): { server: Deno.HttpServer<Deno.NetAddr>; url: string } {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port, onListen: () => {} },
    createSandbox().fetch,
  );
  return { server, url: `http://127.0.0.1:${server.addr.port}` };
}
