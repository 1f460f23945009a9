/**
 * A yardstick: the bare proxy's forwarding over the gateway's own HTTP/1.1 upstream client
 * (src/upstream/http1/client.ts) instead of `fetch`. Beside the bare proxy it shows what the client
 * saves; beside the gateway, what the gateway's checks cost.
 */
import { Http1Upstream } from "../src/upstream/http1/client.ts";

const [port, upstream] = [Number(Deno.args[0]), Deno.args[1]];
// Every connection reused, as the bare proxies do: the yardstick is the client's own cost.
const client = new Http1Upstream("always");
Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, async (request) => {
  const url = request.url;
  const headers: [string, string][] = [];
  request.headers.forEach((value, name) => {
    if (name !== "host") headers.push([name, value]);
  });
  const answer = await client.send({
    method: request.method,
    origin: upstream,
    target: url.slice(url.indexOf("/", url.indexOf("//") + 2)),
    headers,
    body: request.body ? await request.bytes() : undefined,
    timeoutMs: 10_000,
    maxBytes: 10_485_760,
  });
  return new Response(answer.body, {
    status: answer.status,
    headers: answer.headers.filter(([name]) => name !== "content-length"),
  });
});
