/**
 * The bench's yardstick: the barest Deno proxy (Deno.serve + fetch) to the same upstream.
 */
const [port, upstream] = [Number(Deno.args[0]), Deno.args[1]];
Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, async (request) => {
  const url = new URL(request.url);
  const response = await fetch(upstream + url.pathname + url.search, {
    method: request.method,
    headers: request.headers,
    body: request.body,
  });
  return new Response(response.body, { status: response.status, headers: response.headers });
});
