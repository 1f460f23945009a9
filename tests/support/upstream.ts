/**
 * A real HTTP upstream on 127.0.0.1 for proxy tests: answers with a handler of the test's and
 * records every request that reached it.
 */

/** A request as the upstream saw it. */
export interface Recorded {
  method: string;
  path: string;
  headers: Headers;
  body: string;
  /** The body's exact bytes. */
  bytes: Uint8Array;
}

/** A running test upstream. */
export interface TestUpstream extends AsyncDisposable {
  url: string;
  port: number;
  received: Recorded[];
  close(): Promise<void>;
}

/** Starts an upstream answering with `handler` (default: 200 JSON echo of method and path). */
export function startUpstream(
  handler: (request: Request, recorded: Recorded) => Response | Promise<Response> = (_, r) =>
    Response.json({ method: r.method, path: r.path }),
): TestUpstream {
  const received: Recorded[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const url = new URL(req.url);
    const bytes = new Uint8Array(await req.arrayBuffer());
    const recorded = {
      method: req.method,
      path: url.pathname + url.search,
      headers: req.headers,
      body: new TextDecoder().decode(bytes),
      bytes,
    };
    received.push(recorded);
    return handler(req, recorded);
  });
  const close = async () => {
    await server.shutdown();
  };
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    port: server.addr.port,
    received,
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** A port nothing listens on. */
export function closedPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}
