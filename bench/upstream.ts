/**
 * The bench's upstream: a cheap legacy-core stand-in that answers at once with a fixed JSON body
 * carrying `/psd2/v1` links (so that link rewriting has work to do), and the request's
 * X-Request-ID echoed as the interface has it (the gateway reuses a connection to a core that
 * echoes it: `upstream.reuse: echoed`). Every GET gets a balance list and every POST a payment
 * initiation's 201, but for the two requests that make the production read's consent known: the
 * consent's creation and its account list.
 */
import {
  ACCOUNTS_BODY,
  CONSENT_CREATED_BODY,
  CREATED_BODY,
  READ_BODY,
} from "./upstream_answers.ts";

const port = Number(Deno.args[0] ?? 0);
const headers = { "content-type": "application/json", server: "legacy-core/7.2" };
Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, async (request) => {
  const id = request.headers.get("x-request-id");
  const answer = id === null ? headers : { ...headers, "x-request-id": id };
  if (request.method === "POST") {
    await request.arrayBuffer();
    const consent = request.url.endsWith("/psd2/v1/consents");
    return new Response(consent ? CONSENT_CREATED_BODY : CREATED_BODY, {
      status: 201,
      headers: answer,
    });
  }
  const list = request.url.endsWith("/psd2/v1/accounts");
  return new Response(list ? ACCOUNTS_BODY : READ_BODY, { headers: answer });
});
