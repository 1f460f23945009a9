/**
 * The bench's upstream: a cheap legacy-core stand-in that answers every path at once with a
 * fixed JSON body carrying `/psd2/v1` links (so that link rewriting has work to do), and the
 * request's X-Request-ID echoed as the interface has it (the gateway reuses a connection to a core
 * that echoes it: `upstream.reuse: echoed`).
 */
import { CREATED_BODY, READ_BODY } from "./upstream_answers.ts";

const port = Number(Deno.args[0] ?? 0);
const headers = { "content-type": "application/json", server: "legacy-core/7.2" };
Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, async (request) => {
  const id = request.headers.get("x-request-id");
  const answer = id === null ? headers : { ...headers, "x-request-id": id };
  if (request.method === "POST") {
    await request.arrayBuffer();
    return new Response(CREATED_BODY, { status: 201, headers: answer });
  }
  return new Response(READ_BODY, { headers: answer });
});
