import assert from "node:assert/strict";
import {
  answerHeaders,
  compileRoute,
  cutOff,
  encodedAnswer,
  exchange,
  failure,
  forwardedHeaders,
  HOP_BY_HOP,
  upstreamTarget,
} from "../../../src/upstream/forward.ts";
import {
  type Upstream,
  UpstreamError,
  type UpstreamFailure,
  type UpstreamRequest,
} from "../../../src/upstream/exchange.ts";
import { createUpstream } from "../../../src/upstream/mod.ts";
import { type Fault, startFaultyUpstream } from "../../support/faulty_upstream.ts";
import { GatewayError } from "../../../src/psd2/errors.ts";

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
      fromTerminator: true,
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

Deno.test("answerHeaders() passes the allowed headers only", () => {
  const passed = answerHeaders(
    [["server", "core"], ["content-type", "application/json"], ["x-request-id", "core's"]],
    new Set(["content-type", "x-request-id"]),
  );
  assert.deepEqual(passed, {
    headers: [["content-type", "application/json"], ["x-request-id", "core's"]],
    json: true,
    encoded: false,
  });
  const none = new Set<string>();
  assert.equal(answerHeaders([["content-encoding", "gzip"]], none).encoded, true);
  assert.equal(answerHeaders([["content-encoding", "Identity"]], none).encoded, false);
});

Deno.test("compileRoute() takes the origin and the URL's path without trailing slashes, writes for every method but GET", () => {
  const compiled = compileRoute({
    url: "https://core.internal:8443/psd2//",
    template: "/v1/consents/{consentId}",
    method: "GET",
    timeoutMs: 1234,
    retryReads: true,
    maxBytes: 5678,
  });
  assert.equal(compiled.origin, "https://core.internal:8443");
  assert.equal(compiled.prefix, "/psd2");
  assert.equal(compiled.method, "GET");
  assert.equal(compiled.writes, false);
  assert.equal(compiled.timeoutMs, 1234);
  assert.equal(compiled.maxBytes, 5678);
  assert.equal(compiled.path({ consentId: "c-1" }), "/v1/consents/c-1");
  const bare = compileRoute({
    url: "http://core.internal/",
    template: "/v1/consents",
    method: "GET",
    timeoutMs: 1,
    retryReads: true,
    maxBytes: 1,
  });
  assert.equal(bare.prefix, "");
  assert.equal(bare.path({}), "/v1/consents");
  for (const method of ["PUT", "DELETE", "PATCH"]) assert.equal(route(method).writes, true, method);
  const noRetries = compileRoute({
    url: "http://core.internal",
    template: "/",
    method: "GET",
    timeoutMs: 1,
    retryReads: false,
    maxBytes: 1,
  });
  assert.equal(noRetries.retries, 0);
});

Deno.test("upstreamTarget() leaves the query out when there is none, and a missing parameter empty", () => {
  const params = { "payment-service": "payments", "payment-product": "sepa" };
  assert.equal(
    upstreamTarget(route(), params, "http://gw/v1/payments/sepa"),
    "/base/psd2/v1/payments/sepa",
  );
  assert.equal(
    upstreamTarget(route(), { "payment-service": "payments" }, "http://gw/v1/payments/"),
    "/base/psd2/v1/payments/",
  );
});

Deno.test("upstreamTarget() refuses a dot segment with a 400 naming the parameter and the value", () => {
  for (const value of [".", ".."]) {
    assert.throws(
      () =>
        upstreamTarget(
          route(),
          { "payment-service": value, "payment-product": "sepa" },
          "http://gw/",
        ),
      (e) =>
        e instanceof GatewayError && e.status === 400 && e.code === "FORMAT_ERROR" &&
        e.path === "payment-service" &&
        e.message === `Path parameter "payment-service" must not be "${value}"`,
    );
  }
  // A value that only holds dots among other characters is a name, not a dot segment.
  assert.equal(
    upstreamTarget(route(), { "payment-service": "...", "payment-product": ".a" }, "http://gw/"),
    "/base/psd2/v1/.../.a",
  );
});

Deno.test("forwardedHeaders() never forwards a hop-by-hop header, even one the allow-list names, and does not report it", () => {
  const unlisted: string[] = [];
  const list = HOP_BY_HOP.map((name): [string, string] => [name, "x"]);
  const headers = forwardedHeaders(list, {
    allow: new Set(HOP_BY_HOP),
    strip: new Set(HOP_BY_HOP),
    unlisted,
    https: false,
  });
  assert.deepEqual(headers, [["x-forwarded-proto", "http"], ["accept-encoding", "identity"]]);
  assert.deepEqual(unlisted, []);
  assert.deepEqual(HOP_BY_HOP, [
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
    "content-length",
  ]);
});

Deno.test("forwardedHeaders() believes no X-Forwarded-* of a peer that is no terminator, and forwards only the verified certificate header", () => {
  const unlisted: string[] = [];
  const headers = forwardedHeaders(
    [
      ["x-forwarded-proto", "https"],
      ["x-forwarded-for", "203.0.113.7"],
      ["x-forwarded-host", "bank.example"],
      ["x-forwarded-port", "443"],
      ["x-ssl-client-cert", "verified"],
      ["client-cert", ":other:"],
    ],
    {
      allow: new Set(["x-forwarded-host", "x-forwarded-port", "client-cert"]),
      strip: new Set(HOP_BY_HOP),
      unlisted,
      peerAddress: "198.51.100.9",
      certificate: "x-ssl-client-cert",
      https: false,
    },
  );
  assert.deepEqual(headers, [
    ["x-ssl-client-cert", "verified"],
    // The policy's allow-list is the proxy's, which never names a certificate header.
    ["client-cert", ":other:"],
    ["x-forwarded-for", "198.51.100.9"],
    ["x-forwarded-proto", "http"],
    ["accept-encoding", "identity"],
  ]);
  assert.deepEqual(unlisted, [
    "x-forwarded-proto",
    "x-forwarded-for",
    "x-forwarded-host",
    "x-forwarded-port",
  ]);
});

Deno.test("forwardedHeaders() keeps an X-Forwarded-Proto set in front of the gateway, and X-Forwarded-For without a peer", () => {
  const headers = forwardedHeaders(
    [["x-forwarded-proto", "https"], ["x-forwarded-for", "203.0.113.7"], ["accept-encoding", "br"]],
    {
      allow: new Set(["accept-encoding"]),
      strip: new Set(HOP_BY_HOP),
      fromTerminator: true,
      https: false,
    },
  );
  assert.deepEqual(headers, [
    ["x-forwarded-proto", "https"],
    ["x-forwarded-for", "203.0.113.7"],
    ["accept-encoding", "identity"],
  ]);
  // Neither a client's X-Forwarded-For nor a peer: none is made up.
  assert.deepEqual(
    forwardedHeaders([], { allow: new Set(), strip: new Set(), peerAddress: "", https: true }),
    [["x-forwarded-proto", "https"], ["accept-encoding", "identity"]],
  );
  // A peer without a client's value: the peer alone.
  assert.deepEqual(
    forwardedHeaders([], {
      allow: new Set(),
      strip: new Set(),
      peerAddress: "10.1.2.3",
      https: true,
    })[0],
    ["x-forwarded-for", "10.1.2.3"],
  );
});

Deno.test("forwardedHeaders() drops a not-allowed header silently without an unlisted list", () => {
  const headers = forwardedHeaders([["x-original-url", "/admin"], ["psu-id", "p"]], {
    allow: new Set(["psu-id"]),
    strip: new Set(),
    https: true,
  });
  assert.deepEqual(headers, [
    ["psu-id", "p"],
    ["x-forwarded-proto", "https"],
    ["accept-encoding", "identity"],
  ]);
});

Deno.test("failure() texts: what the TPP reads for each failure, with Retry-After", () => {
  const text = (kind: UpstreamFailure | undefined, method: string) => {
    const failed = failure(route(method), kind ? new UpstreamError(kind, "x") : new Error("x"));
    assert.deepEqual(failed.error.headers, { "retry-after": "5" });
    return failed.error.message;
  };
  const unknown = "; the outcome is unknown, read the resource status before retrying";
  assert.equal(text("timeout", "GET"), "The bank did not answer in time");
  assert.equal(text("timeout", "POST"), `The bank did not answer in time${unknown}`);
  assert.equal(text("too_large", "GET"), "The bank's answer was too large to pass on");
  assert.equal(text("too_large", "POST"), `The bank's answer was too large to pass on${unknown}`);
  assert.equal(text("refused", "POST"), "The bank could not be reached");
  assert.equal(text("reset", "GET"), "The bank could not be reached");
  assert.equal(text("reset", "POST"), `The bank broke the connection${unknown}`);
  assert.equal(text("broken", "DELETE"), `The bank broke the connection${unknown}`);
  // Anything but an UpstreamError is a broken exchange: the write's outcome is unknown.
  assert.equal(text(undefined, "POST"), `The bank broke the connection${unknown}`);
  assert.equal(failure(route("POST"), new Error("x")).outcomeUnknown, true);
  assert.equal(failure(route("GET"), new Error("x")).outcomeUnknown, false);
});

Deno.test("cutOff() takes an empty connection-framed answer as whole, and a read's cut one without an unknown outcome", () => {
  const answer = (body: string) => ({
    status: 200,
    headers: [],
    body: new TextEncoder().encode(body),
    closeDelimited: true,
  });
  assert.equal(cutOff(route(), answer(""), true), undefined);
  const read = cutOff(route("GET"), answer('{"a":'), true);
  assert.equal(read?.outcomeUnknown, false);
  assert.equal(read?.error.status, 503);
  assert.equal(read?.error.code, "UPSTREAM_UNAVAILABLE");
  assert.equal(read?.error.message, "The bank broke the connection");
  assert.deepEqual(read?.error.headers, { "retry-after": "5" });
  assert.match(cutOff(route("POST"), answer('{"a":'), true)!.error.message, /outcome is unknown/);
});

Deno.test("encodedAnswer() is a 503 whose write has an unknown outcome", () => {
  const read = encodedAnswer(route("GET"));
  assert.equal(read.outcomeUnknown, false);
  assert.equal(read.error.code, "UPSTREAM_UNAVAILABLE");
  assert.equal(read.error.message, "The bank's answer was encoded and cannot be passed on");
  const write = encodedAnswer(route("POST"));
  assert.equal(write.outcomeUnknown, true);
  assert.equal(
    write.error.message,
    "The bank's answer was encoded and cannot be passed on; the outcome is unknown, read the resource status before retrying",
  );
});

Deno.test("answerHeaders() finds JSON and an encoding in headers it does not pass, identity with spaces is none", () => {
  const none = new Set<string>();
  const seen = answerHeaders(
    [["content-type", "application/problem+json"], ["content-encoding", " identity "]],
    none,
  );
  assert.deepEqual(seen, { headers: [], json: true, encoded: false });
  assert.equal(answerHeaders([["content-type", "text/plain"]], none).json, false);
  assert.equal(answerHeaders([["x-note", "json"]], none).json, false);
  assert.equal(
    answerHeaders([["content-encoding", "identity, gzip"]], none).encoded,
    true,
  );
  assert.equal(answerHeaders([["content-encoding", "xidentity"]], none).encoded, true);
  assert.equal(answerHeaders([["x-encoding", "gzip"]], none).encoded, false);
  // Every allowed one passes, in order, repeated ones too.
  const allow = new Set(["content-type", "x-request-id", "retry-after"]);
  const pairs: [string, string][] = [["x-request-id", "a"], ["retry-after", "1"], [
    "retry-after",
    "2",
  ]];
  assert.deepEqual(answerHeaders(pairs, allow).headers, pairs);
});

/** The real HTTP/1.1 client, with what the proxy asked of each exchange kept (and when). */
function recorded(upstream: Upstream = createUpstream({ client: "http1" })) {
  const sent: { request: UpstreamRequest; at: number }[] = [];
  return {
    sent,
    send(request: UpstreamRequest) {
      sent.push({ request, at: performance.now() });
      return upstream.send(request);
    },
    close: () => upstream.close(),
  };
}

function readRoute(options: { retryReads?: boolean; timeoutMs?: number; url: string }) {
  return compileRoute({
    url: options.url,
    template: "/v1/consents/c-1",
    method: "GET",
    timeoutMs: options.timeoutMs ?? 5000,
    retryReads: options.retryReads ?? true,
    maxBytes: 1000,
  });
}

const answer: Fault = {
  kind: "answer",
  status: 200,
  headers: { "content-type": "application/json" },
  body: "{}",
};

Deno.test("exchange() retries a read once when the connection broke before the head, with what is left of the deadline", async () => {
  let calls = 0;
  await using core = startFaultyUpstream(() =>
    calls++ === 0 ? { kind: "reset", stage: "head" } : answer
  );
  const upstream = recorded();
  try {
    const read = readRoute({ url: core.url, timeoutMs: 5000 });
    const started = performance.now() - 4321;
    const got = await exchange(upstream, read, {
      target: "/v1/consents/c-1",
      headers: [["x-request-id", "r-1"]],
      body: new TextEncoder().encode("not for a read"),
      started,
    });
    assert.equal(got.status, 200);
    assert.equal(core.requests.length, 2);
    assert.equal(core.requests[1].body, "", "a read carries no body");
    assert.equal(core.requests[1].headers.get("x-request-id"), "r-1");
    const [first, second] = upstream.sent;
    assert.equal(first.request.timeoutMs, 5000);
    assert.equal(first.request.maxBytes, 1000);
    assert.equal(first.request.origin, core.url);
    // What was left when the retry started (at most), rounded up to a tenth of a second.
    const left = 5000 - (second.at - started);
    assert.ok(second.request.timeoutMs >= left, `${second.request.timeoutMs} >= ${left}`);
    assert.ok(second.request.timeoutMs < left + 100, `${second.request.timeoutMs} < ${left} + 100`);
    assert.equal(second.request.timeoutMs % 100, 0);
  } finally {
    upstream.close();
  }
});

Deno.test("exchange() gives a retry at least 100 ms when the deadline has passed", async () => {
  let calls = 0;
  await using core = startFaultyUpstream(() =>
    calls++ === 0 ? { kind: "reset", stage: "head" } : answer
  );
  const upstream = recorded();
  try {
    const read = readRoute({ url: core.url, timeoutMs: 1000 });
    await exchange(upstream, read, { target: "/", headers: [], started: performance.now() - 5000 });
    assert.equal(upstream.sent[1].request.timeoutMs, 100);
  } finally {
    upstream.close();
  }
});

Deno.test("exchange() retries a read once only, and not at all without retry_reads or after the head", async () => {
  await using core = startFaultyUpstream({ kind: "reset", stage: "head" });
  const upstream = recorded();
  try {
    const request = { target: "/", headers: [], started: performance.now() };
    await assert.rejects(
      () => exchange(upstream, readRoute({ url: core.url }), request),
      (e) => e instanceof UpstreamError && e.failure === "reset",
    );
    assert.equal(core.requests.length, 2);
    await assert.rejects(
      () => exchange(upstream, readRoute({ url: core.url, retryReads: false }), request),
      (e) => e instanceof UpstreamError && e.failure === "reset",
    );
    assert.equal(core.requests.length, 3);
    core.fault = { kind: "reset", stage: "body" };
    await assert.rejects(
      () => exchange(upstream, readRoute({ url: core.url }), request),
      (e) => e instanceof UpstreamError && e.failure === "broken",
    );
    assert.equal(core.requests.length, 4, "a broken answer is not retried");
  } finally {
    upstream.close();
  }
});

Deno.test("exchange() retries a read whose connection was refused, and never a write", async () => {
  await using core = startFaultyUpstream({ kind: "reset", stage: "head" });
  const upstream = recorded();
  try {
    const request = {
      target: "/",
      headers: [],
      body: new TextEncoder().encode('{"a":1}'),
      started: performance.now(),
    };
    const write = compileRoute({
      url: core.url,
      template: "/",
      method: "POST",
      timeoutMs: 5000,
      retryReads: true,
      maxBytes: 1000,
    });
    await assert.rejects(
      () => exchange(upstream, write, request),
      (e) => e instanceof UpstreamError && e.failure === "reset",
    );
    assert.equal(core.requests.length, 1, "a write is sent once");
    assert.equal(core.requests[0].body, '{"a":1}');
    core.refuse();
    upstream.sent.length = 0;
    await assert.rejects(
      () => exchange(upstream, readRoute({ url: core.url }), request),
      (e) => e instanceof UpstreamError && e.failure === "refused",
    );
    assert.equal(upstream.sent.length, 2, "the read is tried twice");
    upstream.sent.length = 0;
    await assert.rejects(
      () => exchange(upstream, write, request),
      (e) => e instanceof UpstreamError && e.failure === "refused",
    );
    assert.equal(upstream.sent.length, 1, "the write once");
  } finally {
    upstream.close();
  }
});

Deno.test("compileRoute() strips every trailing slash of the upstream path, also before a query", () => {
  const compiled = compileRoute({
    url: "http://core.internal/base//?tenant=1",
    template: "/x",
    method: "GET",
    timeoutMs: 1,
    retryReads: true,
    maxBytes: 1,
  });
  assert.equal(compiled.prefix, "/base");
});
