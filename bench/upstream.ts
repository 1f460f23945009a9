/**
 * The bench's upstream: a cheap legacy-core stand-in that answers every path at once with a
 * fixed JSON body carrying `/psd2/v1` links (so that link rewriting has work to do).
 */
import { CREATED_BODY, READ_BODY } from "./upstream_answers.ts";

const port = Number(Deno.args[0] ?? 0);
const headers = { "content-type": "application/json", server: "legacy-core/7.2" };
Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, async (request) => {
  if (request.method === "POST") {
    await request.arrayBuffer();
    return new Response(CREATED_BODY, { status: 201, headers });
  }
  return new Response(READ_BODY, { headers });
});
