/**
 * A test upstream as a process of its own (for tests of the gateway under `deno serve`): answers
 * every request with its method and path as JSON. Port from the first argument.
 */
Deno.serve(
  { hostname: "127.0.0.1", port: Number(Deno.args[0]), onListen: () => {} },
  (request) => {
    const url = new URL(request.url);
    return Response.json({ method: request.method, path: url.pathname + url.search });
  },
);
