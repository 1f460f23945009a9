import assert from "node:assert/strict";
import { Context } from "hono";
import { type GatewayContext } from "../../../src/core/check.ts";
import { header, requestHeaders } from "../../../src/core/request.ts";

function context(headers: [string, string][]): GatewayContext {
  return new Context(new Request("http://gateway.test/v1/consents", { headers })) as GatewayContext;
}

Deno.test("requestHeaders() answers as Headers.get does: any case, repeated values joined, null when absent", () => {
  const c = context([["X-Request-ID", "id-1"], ["Accept", "a/b"], ["accept", "c/d"]]);
  const lookup = requestHeaders(c);
  const raw = c.req.raw.headers;
  for (const name of ["x-request-id", "X-Request-ID", "accept", "ACCEPT", "psu-id"]) {
    assert.equal(lookup.get(name), raw.get(name), name);
    assert.equal(lookup.has(name), raw.has(name), name);
  }
  assert.equal(lookup.get("accept"), "a/b, c/d");
  assert.equal(lookup.get("psu-id"), null);
  assert.equal(header(c, "psu-id"), undefined);
  assert.equal(header(c, "X-Request-Id"), "id-1");
  // Read once per request.
  assert.equal(requestHeaders(c), lookup);
});
