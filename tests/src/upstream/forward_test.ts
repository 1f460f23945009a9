import assert from "node:assert/strict";
import {
  answerHeaders,
  compileRoute,
  cutOff,
  failure,
  forwardedHeaders,
  HOP_BY_HOP,
  upstreamTarget,
} from "../../../src/upstream/forward.ts";
import { UpstreamError } from "../../../src/upstream/exchange.ts";
import { GatewayError } from "../../../src/core/errors.ts";

function route(method = "POST") {
  return compileRoute({
    url: "http://core.internal:9000/base/",
    template: "/psd2/v1/{payment-service}/{payment-product}",
    method,
    timeoutMs: 1000,
    retryReads: true,
    maxBytes: 1000,
  });
}

Deno.test("upstreamTarget() puts the URL's path, the encoded parameters and the query together", () => {
  const params = { "payment-service": "payments", "payment-product": "a/b" };
  assert.equal(
    upstreamTarget(route(), params, "http://gw/v1/payments/x?y=1"),
    "/base/psd2/v1/payments/a%2Fb?y=1",
  );
  assert.throws(
    () => upstreamTarget(route(), { ...params, "payment-product": ".." }, "http://gw/"),
    (e) => e instanceof GatewayError && e.status === 400,
  );
});

Deno.test("compileRoute() retries reads only, and freezes the route", () => {
  assert.equal(route("GET").retries, 1);
  assert.equal(route("POST").retries, 0);
  assert.equal(route("POST").writes, true);
  assert.ok(Object.isFrozen(route()));
});

Deno.test("forwardedHeaders() keeps the allowed, appends the peer to X-Forwarded-For, adds the scheme, asks for identity", () => {
  const unlisted: string[] = [];
  const headers = forwardedHeaders(
    [
      ["x-request-id", "1"],
      ["te", "trailers"],
      ["x-forwarded-for", "10.0.0.1"],
      ["psu-id", "p"],
      ["accept-encoding", "gzip, br"],
      ["x-original-url", "/admin"],
    ],
    {
      allow: new Set(["x-request-id", "psu-id"]),
      strip: new Set(HOP_BY_HOP),
      unlisted,
      dropped: new Set(["psu-id"]),
      peerAddress: "127.0.0.1",
      https: true,
    },
  );
  assert.deepEqual(headers, [
    ["x-request-id", "1"],
    ["x-forwarded-for", "10.0.0.1, 127.0.0.1"],
    ["x-forwarded-proto", "https"],
    ["accept-encoding", "identity"],
  ]);
  assert.deepEqual(unlisted, ["x-original-url"]);
});

Deno.test("failure() maps each upstream failure to its 503, unknown outcome for writes that left", () => {
  const cases = [
    ["refused", "GET", "UPSTREAM_UNAVAILABLE", false],
    ["refused", "POST", "UPSTREAM_UNAVAILABLE", false],
    ["reset", "POST", "UPSTREAM_UNAVAILABLE", true],
    ["broken", "GET", "UPSTREAM_UNAVAILABLE", false],
    ["timeout", "POST", "UPSTREAM_TIMEOUT", true],
    ["too_large", "PUT", "UPSTREAM_UNAVAILABLE", true],
  ] as const;
  for (const [kind, method, code, unknown] of cases) {
    const failed = failure(route(method), new UpstreamError(kind, "x"));
    assert.equal(failed.error.status, 503);
    assert.equal(failed.error.code, code, kind);
    assert.equal(failed.outcomeUnknown, unknown, `${kind} ${method}`);
    assert.equal(/outcome is unknown/.test(failed.error.message), unknown, `${kind} ${method}`);
  }
});

Deno.test("cutOff() takes a connection-framed JSON answer that does not parse as cut off", () => {
  const answer = (body: string, closeDelimited: boolean) => ({
    status: 200,
    headers: [],
    body: new TextEncoder().encode(body),
    closeDelimited,
  });
  assert.equal(cutOff(route(), answer('{"a":1}', true), true), undefined);
  assert.equal(cutOff(route(), answer('{"a":', false), true), undefined);
  assert.equal(cutOff(route(), answer('{"a":', true), false), undefined);
  assert.equal(cutOff(route(), answer('{"a":', true), true)?.outcomeUnknown, true);
});

Deno.test("answerHeaders() passes the allowed headers the gateway did not decide", () => {
  const passed = answerHeaders(
    [["server", "core"], ["content-type", "application/json"], ["x-request-id", "core's"]],
    new Set(["content-type", "x-request-id"]),
    [["x-request-id", "gateway's"]],
  );
  assert.deepEqual(passed, {
    headers: [["content-type", "application/json"]],
    json: true,
    encoded: false,
  });
  const none = new Set<string>();
  assert.equal(answerHeaders([["content-encoding", "gzip"]], none, undefined).encoded, true);
  assert.equal(answerHeaders([["content-encoding", "Identity"]], none, undefined).encoded, false);
});
