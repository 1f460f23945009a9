import assert from "node:assert/strict";
import { answersAnother, type UpstreamRequest } from "../../../src/upstream/exchange.ts";

function request(id?: string): UpstreamRequest {
  return {
    method: "GET",
    origin: "http://core",
    target: "/",
    headers: id === undefined ? [] : [["x-request-id", id]],
    timeoutMs: 1000,
    maxBytes: 1000,
  };
}

Deno.test("answersAnother() refuses an echoed X-Request-ID of another request, any case of its own passes", () => {
  const id = "99391c7e-ad88-49ec-a2ad-99ddcb1f7721";
  assert.equal(answersAnother(request(id), null), false);
  assert.equal(answersAnother(request(id), ` ${id.toUpperCase()} `), false);
  assert.equal(answersAnother(request(id), crypto.randomUUID()), true);
  assert.equal(answersAnother(request(id), `${id}, ${id}`), true);
  assert.equal(answersAnother(request(), id), true);
});
