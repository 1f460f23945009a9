/**
 * Issue 18.15: compressed answers passed unseen. The client's Accept-Encoding was forwarded, so
 * the core gzipped its answer; the links in it were not rewritten and the encoding header was
 * stripped. The gateway now asks the core for identity encoding whatever the client sent, and an
 * answer encoded anyway is refused rather than passed on unread.
 */
import assert from "node:assert/strict";
import { rawAnswer, startFaultyUpstream } from "../support/faulty_upstream.ts";
import { startGateway } from "../support/gateway.ts";
import { buildPolicy } from "../support/policies.ts";

function policy(client: "http1" | "fetch") {
  return buildPolicy({ upstream: { url: "${UPSTREAM_URL}", prefix: "/psd2/v1", client } });
}

const LINKED = JSON.stringify({
  consentStatus: "valid",
  _links: { self: { href: "/psd2/v1/consents/c-1" } },
});

async function gzip(text: string): Promise<Uint8Array> {
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

Deno.test("the core is asked for identity encoding whatever the client accepts, so links are rewritten", async () => {
  for (const client of ["http1", "fetch"] as const) {
    await using core = startFaultyUpstream({
      kind: "raw",
      parts: [{ bytes: rawAnswer(200, ["content-type: application/json"], LINKED) }],
    });
    await using gateway = await startGateway({ policy: policy(client), upstream: core.url });
    const response = await gateway.fetch("/v1/consents/c-1", {
      headers: { "x-request-id": crypto.randomUUID(), "accept-encoding": "gzip, br" },
    });
    assert.equal(response.status, 200, client);
    assert.deepEqual(await response.json(), {
      consentStatus: "valid",
      _links: { self: { href: "/v1/consents/c-1" } },
    });
    const sent = core.requests[0].head.toLowerCase().split("\r\n");
    assert.deepEqual(
      sent.filter((line) => line.startsWith("accept-encoding:")),
      ["accept-encoding: identity"],
      client,
    );
  }
});

Deno.test("an answer the core encodes anyway is refused (503), never passed on under a JSON label", async () => {
  const body = await gzip(LINKED);
  const head = rawAnswer(
    200,
    ["content-type: application/json", "content-encoding: gzip", `content-length: ${body.length}`],
    "",
    { length: false },
  );
  for (const client of ["http1", "fetch"] as const) {
    await using core = startFaultyUpstream({
      kind: "raw",
      parts: [{ bytes: head }, { bytes: body }],
    });
    await using gateway = await startGateway({ policy: policy(client), upstream: core.url });
    const response = await gateway.fetch("/v1/consents/c-1", {
      headers: { "x-request-id": crypto.randomUUID(), "accept-encoding": "gzip" },
    });
    assert.equal(response.status, 503, client);
    assert.equal((await response.json()).tppMessages[0].code, "UPSTREAM_UNAVAILABLE", client);
    assert.equal(core.requests.length, 1, `${client}: a read answered is not retried`);
  }
});
