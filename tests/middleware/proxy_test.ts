import assert from "node:assert/strict";
import { gatewayApp, startGateway } from "../support/gateway.ts";
import { closedPort, startUpstream } from "../support/upstream.ts";
import { initiationHeaders, singlePayment } from "../support/requests.ts";
import { buildPolicy, type LevelInput, type PolicyInput } from "../support/policies.ts";
import { paymentCreated, rawAnswer, startFaultyUpstream } from "../support/faulty_upstream.ts";
import { tokenIssuer } from "../support/tpp_tokens.ts";
import { createCa, issue, nginxHeader } from "../support/pki.ts";
import { PIPELINE } from "../../middleware/mod.ts";
import { policyJsonSchema } from "../../src/policy/load.ts";

const ID = "9b2f3c1e-4d5a-4b6c-8d7e-0f1a2b3c4d5e";

function policy(proxy: LevelInput["proxy"] = {}, ...parts: PolicyInput[]) {
  return buildPolicy({
    upstream: { url: "${UPSTREAM_URL}", prefix: "/psd2/v1" },
    defaults: { proxy: { timeout: "400ms", ...proxy } },
  }, ...parts);
}

/** A TCP server that accepts connections and closes them at once, counting them. */
function slammingServer() {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const state = { connections: 0 };
  (async () => {
    for await (const conn of listener) {
      state.connections++;
      conn.close();
    }
  })().catch(() => {});
  return { url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`, state, listener };
}

Deno.test("proxy() forwards to the upstream path under the prefix, with the query", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({ policy: policy(), upstream: upstream.url });
  const response = await gateway.fetch(
    "/v1/accounts/acc-1/transactions?bookingStatus=booked&dateFrom=2026-01-01",
    { headers: { "x-request-id": ID, "consent-id": "c1" } },
  );
  assert.equal(response.status, 200);
  assert.deepEqual(await response.json(), {
    method: "GET",
    path: "/psd2/v1/accounts/acc-1/transactions?bookingStatus=booked&dateFrom=2026-01-01",
  });
  assert.equal(upstream.received[0].headers.get("consent-id"), "c1");
  assert.equal(upstream.received[0].headers.get("x-forwarded-proto"), "http");
  assert.equal(upstream.received[0].headers.get("x-forwarded-for"), "127.0.0.1");
});

Deno.test("proxy() forwards through either upstream client; http1 keeps its connection alive", async () => {
  for (const client of ["http1", "fetch"] as const) {
    const ports: number[] = [];
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      async (request, info) => {
        ports.push(info.remoteAddr.port);
        // A core that echoes X-Request-ID, as the interface has it: its connection is reused.
        return Response.json({ method: request.method, body: await request.text() }, {
          headers: { "x-request-id": request.headers.get("x-request-id") ?? "" },
        });
      },
    );
    await using gateway = await startGateway({
      policy: policy({}, { upstream: { url: "${UPSTREAM_URL}", prefix: "/psd2/v1", client } }),
      upstream: `http://127.0.0.1:${server.addr.port}`,
    });
    for (let i = 0; i < 3; i++) {
      const response = await gateway.fetch("/v1/consents/c-1", {
        headers: { "x-request-id": crypto.randomUUID() },
      });
      assert.deepEqual(await response.json(), { method: "GET", body: "" }, client);
    }
    const created = await gateway.fetch("/v1/payments/domestic", {
      method: "POST",
      headers: initiationHeaders({ "x-request-id": crypto.randomUUID() }),
      body: JSON.stringify(singlePayment()),
    });
    assert.deepEqual(await created.json(), {
      method: "POST",
      body: JSON.stringify(singlePayment()),
    }, client);
    assert.equal(ports.length, 4, client);
    if (client === "http1") assert.equal(new Set(ports).size, 1, "one connection, kept alive");
    await gateway.close();
    await server.shutdown();
  }
});

Deno.test("proxy() strips hop-by-hop and internal headers and adds security headers", async () => {
  await using upstream = startUpstream(() =>
    new Response('{"ok":true}', {
      headers: {
        "content-type": "application/json",
        server: "legacy-core/7.2",
        "x-powered-by": "CoreBanking",
        "x-internal-node": "core-03",
        "keep-alive": "timeout=5",
        "x-kept": "yes",
      },
    })
  );
  await using gateway = await startGateway({
    policy: policy({
      hide_headers: ["X-Internal-Node"],
      answer_headers: ["X-Kept", "X-Internal-Node"],
    }),
    upstream: upstream.url,
  });
  const response = await gateway.fetch("/v1/consents/c-1", {
    headers: { "x-request-id": ID, "proxy-authorization": "Basic c2VjcmV0", te: "trailers" },
  });
  assert.equal(response.status, 200);
  await response.body?.cancel();
  assert.equal(response.headers.get("server"), null);
  assert.equal(response.headers.get("x-powered-by"), null);
  assert.equal(response.headers.get("x-internal-node"), null);
  assert.equal(response.headers.get("keep-alive"), null);
  assert.equal(response.headers.get("x-kept"), "yes", "allowed by the policy");
  assert.equal(response.headers.get("cache-control"), "no-store");
  assert.equal(response.headers.get("x-content-type-options"), "nosniff");
  assert.equal(response.headers.get("x-request-id"), ID);
  const seen = upstream.received[0].headers;
  assert.equal(seen.get("proxy-authorization"), null);
  assert.equal(seen.get("te"), null);
});

Deno.test("proxy() does not add no-store to public product data", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({ policy: policy(), upstream: upstream.url });
  const response = await gateway.fetch("/v1/products/en/deposits");
  await response.body?.cancel();
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("cache-control"), null);
  assert.equal(upstream.received[0].path, "/v1/products/en/deposits");
});

Deno.test("proxy() answers 503 UPSTREAM_UNAVAILABLE when the upstream is unreachable", async () => {
  await using gateway = await startGateway({
    policy: policy(),
    upstream: `http://127.0.0.1:${closedPort()}`,
  });
  const response = await gateway.fetch("/v1/consents/c-1", { headers: { "x-request-id": ID } });
  assert.equal(response.status, 503);
  assert.equal(response.headers.get("retry-after"), "5");
  assert.equal(response.headers.get("x-request-id"), ID);
  const body = await response.json();
  assert.equal(body.tppMessages[0].code, "UPSTREAM_UNAVAILABLE");
  assert.equal(body.tppMessages[0].category, "ERROR");
});

Deno.test("proxy() answers 503 UPSTREAM_TIMEOUT when the upstream stalls past the deadline", async () => {
  let release = () => {};
  const stalled = new Promise<void>((resolve) => release = resolve);
  await using upstream = startUpstream(async () => {
    await stalled;
    return Response.json({});
  });
  await using gateway = await startGateway({ policy: policy(), upstream: upstream.url });
  const response = await gateway.fetch("/v1/payments/domestic", {
    method: "POST",
    headers: initiationHeaders({ "x-request-id": ID }),
    body: JSON.stringify(singlePayment()),
  });
  release();
  assert.equal(response.status, 503);
  const body = await response.json();
  assert.equal(body.tppMessages[0].code, "UPSTREAM_TIMEOUT");
  assert.match(body.tppMessages[0].text, /outcome is unknown/);
});

Deno.test("proxy() never retries a write, and retries a read once on a connection error", async () => {
  const server = slammingServer();
  try {
    await using gateway = await startGateway({ policy: policy(), upstream: server.url });
    const write = await gateway.fetch("/v1/payments/domestic", {
      method: "POST",
      headers: initiationHeaders({ "x-request-id": ID }),
      body: JSON.stringify(singlePayment()),
    });
    assert.equal(write.status, 503);
    await write.body?.cancel();
    assert.equal(server.state.connections, 1);
    const read = await gateway.fetch("/v1/consents/c-1", { headers: { "x-request-id": ID } });
    assert.equal(read.status, 503);
    await read.body?.cancel();
    assert.equal(server.state.connections, 3);
  } finally {
    server.listener.close();
  }
});

Deno.test("proxy() does not retry reads when the policy says so", async () => {
  const server = slammingServer();
  try {
    await using gateway = await startGateway({
      policy: policy({ retry_reads: false }),
      upstream: server.url,
    });
    const read = await gateway.fetch("/v1/consents/c-1", { headers: { "x-request-id": ID } });
    await read.body?.cancel();
    assert.equal(read.status, 503);
    assert.equal(server.state.connections, 1);
  } finally {
    server.listener.close();
  }
});

/** What the gateway passes on of a JSON answer ending in `name` bytes, and its log. */
async function passedOn(name: number[]) {
  const head = new TextEncoder().encode(
    '{"_links":{"self":{"href":"/psd2/v1/consents/c-1"}},"name":"',
  );
  const sent = new Uint8Array([...head, ...name, 0x22, 0x7d]);
  await using upstream = startUpstream(() =>
    new Response(sent, { headers: { "content-type": "application/json" } })
  );
  await using gateway = await startGateway({ policy: policy(), upstream: upstream.url });
  const response = await gateway.fetch("/v1/consents/c-1", { headers: { "x-request-id": ID } });
  assert.equal(response.status, 200);
  return { sent, got: new Uint8Array(await response.arrayBuffer()), log: gateway.log.lines };
}

Deno.test("proxy() passes a JSON answer that is not UTF-8 byte for byte, links and all", async () => {
  const invalid = await passedOn([0xff, 0xfe]);
  assert.deepEqual(invalid.got, invalid.sent);
  assert.ok(
    invalid.log.some((line) =>
      line.level === "warn" && String(line.msg).includes("UTF-8") && line.request_id === ID
    ),
  );

  // The same answer in valid UTF-8 has its link rewritten (the filter is on in this policy), also
  // when it holds a U+FFFD of the bank's own.
  for (const [bytes, name] of [[[0xc3, 0xa9], "\u00e9"], [[0xef, 0xbf, 0xbd], "\ufffd"]] as const) {
    const valid = await passedOn([...bytes]);
    assert.deepEqual(JSON.parse(new TextDecoder().decode(valid.got)), {
      _links: { self: { href: "/v1/consents/c-1" } },
      name,
    });
  }
});

Deno.test("proxy() refuses an upstream answer larger than max_response_bytes", async () => {
  await using upstream = startUpstream(() => new Response("x".repeat(5000)));
  await using gateway = await startGateway({
    policy: policy({ max_response_bytes: 1000 }),
    upstream: upstream.url,
  });
  const response = await gateway.fetch("/v1/consents/c-1", { headers: { "x-request-id": ID } });
  assert.equal(response.status, 503);
  assert.equal((await response.json()).tppMessages[0].code, "UPSTREAM_UNAVAILABLE");
});

Deno.test("proxy() keeps an encoded slash inside one path parameter", async () => {
  await using upstream = startUpstream();
  // path_params would refuse this id; the proxy must stay safe on its own.
  await using gateway = await startGateway({
    policy: policy({}, { defaults: { path_params: { mode: "off" } } }),
    upstream: upstream.url,
  });
  const response = await gateway.fetch("/v1/consents/a%2F..%2Fb/status", {
    headers: { "x-request-id": ID },
  });
  await response.body?.cancel();
  assert.equal(upstream.received[0].path, "/psd2/v1/consents/a%2F..%2Fb/status");
});

Deno.test("proxy() refuses a dot-segment path parameter whatever path_params says", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({
    policy: policy({}, { defaults: { path_params: { mode: "off" } } }),
    upstream: upstream.url,
  });
  for (const id of ["..", "%2e%2e", ".", "%2E"]) {
    const response = await rawGet(gateway.url, `/v1/consents/${id}/status`);
    assert.equal(response.status, 400, id);
    assert.equal(response.body.tppMessages[0].code, "FORMAT_ERROR");
    assert.equal(response.body.tppMessages[0].path, "consentId");
  }
  assert.equal(upstream.received.length, 0);
});

/** A GET sent over a raw connection, so that no client normalises the path first. */
async function rawGet(base: string, target: string) {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: Number(new URL(base).port) });
  await conn.write(
    new TextEncoder().encode(
      `GET ${target} HTTP/1.1\r\nHost: x\r\nX-Request-ID: ${ID}\r\nConnection: close\r\n\r\n`,
    ),
  );
  const text = new TextDecoder().decode(await new Response(conn.readable).arrayBuffer());
  const [head, body] = text.split("\r\n\r\n");
  return { status: Number(head.split(" ")[1]), body: JSON.parse(body) };
}

Deno.test("proxy() logs upstream failures without the upstream URL and its account ids", async () => {
  await using gateway = await startGateway({
    policy: policy(),
    upstream: `http://127.0.0.1:${closedPort()}`,
  });
  const response = await gateway.fetch("/v1/accounts/GE42SB0000000101904917/balances", {
    headers: { "x-request-id": ID, "consent-id": "c1" },
  });
  await response.body?.cancel();
  assert.equal(response.status, 503);
  const failure = gateway.log.lines.find((l) => l.msg === "upstream failure");
  assert.ok(failure, "the failure is logged");
  assert.equal(failure.request_id, ID);
  assert.doesNotMatch(JSON.stringify(gateway.log.lines), /GE42SB0000000101904917/);
});

Deno.test("proxy() logs an upstream failure with the operation, its time and the error", async () => {
  await using gateway = await startGateway({
    policy: policy(),
    upstream: `http://127.0.0.1:${closedPort()}`,
  });
  const response = await gateway.fetch("/v1/consents/c-1", { headers: { "x-request-id": ID } });
  await response.body?.cancel();
  const failure = gateway.log.lines.find((l) => l.msg === "upstream failure")!;
  assert.equal(failure.op, "getConsentInformation");

  assert.match(String(failure.error), /^UpstreamError: /);
  const line = gateway.log.lines.find((l) => l.op === "getConsentInformation" && !l.msg)!;
  assert.equal(line.upstream_status, undefined, "no answer, no upstream status");
  assert.ok(typeof failure.ms === "number" && failure.ms >= 0);
  assert.ok(failure.ms <= (line.ms as number) + 1, "within the request's time");
});

Deno.test("proxy() records the upstream's status and time in the access log line", async () => {
  await using upstream = startUpstream(() => Response.json({}, { status: 202 }));
  await using gateway = await startGateway({ policy: policy(), upstream: upstream.url });
  const response = await gateway.fetch("/v1/consents/c-1", { headers: { "x-request-id": ID } });
  await response.body?.cancel();
  assert.equal(response.status, 202);
  const line = gateway.log.lines.find((l) => l.request_id === ID && l.status === 202)!;
  assert.equal(line.upstream_status, 202);
  assert.ok(typeof line.upstream_ms === "number" && line.upstream_ms >= 0);
  assert.ok(line.upstream_ms <= (line.ms as number) + 1, "within the request's time");
});

/** A gateway that keeps answers for a replay to one identified TPP, in front of `core`. */
let issuing: ReturnType<typeof tokenIssuer> | undefined;

async function keeping(core: string) {
  const issuer = await (issuing ??= tokenIssuer());
  const gateway = await startGateway({
    policy: policy({}, {
      defaults: { idempotency: { mode: "enforce" }, bearer_token: issuer.options },
    }),
    upstream: core,
  });
  const tpp = await issuer.headers("PSDGE-NBG-123456");
  const pay = (id: string) =>
    gateway.fetch("/v1/payments/domestic", {
      method: "POST",
      headers: initiationHeaders({ "x-request-id": id, ...tpp }),
      body: JSON.stringify(singlePayment()),
    });
  return { gateway, pay };
}

Deno.test("proxy() marks a write whose answer was encoded or cut off as an unknown outcome, replayed, never executed again", async () => {
  const answers = {
    encoded: rawAnswer(201, ["content-type: application/json", "content-encoding: gzip"], "xxxx"),
    "cut off": rawAnswer(201, ["content-type: application/json"], '{"paymentId":"p', {
      length: false,
    }),
  };
  for (const [kind, bytes] of Object.entries(answers)) {
    await using core = startFaultyUpstream({ kind: "raw", parts: [{ bytes }], then: "close" });
    const { gateway, pay } = await keeping(core.url);
    try {
      const id = crypto.randomUUID();
      const first = await pay(id);
      assert.equal(first.status, 503, kind);
      assert.match((await first.json()).tppMessages[0].text, /outcome is unknown/, kind);
      const logged = gateway.log.lines.find((l) => String(l.msg).startsWith("upstream answer"))!;
      assert.equal(logged.msg, `upstream answer ${kind}`);
      assert.equal(logged.op, "initiatePayment");
      const again = await pay(id);
      assert.equal(again.status, 503, kind);
      assert.equal(again.headers.get("x-idempotent-replay"), "true", kind);
      await again.body?.cancel();
      assert.equal(core.requests.length, 1, `${kind}: the write reached the core once`);
    } finally {
      await gateway.close();
    }
  }
});

Deno.test("proxy() marks a write that timed out as an unknown outcome; a refused one is not and runs again", async () => {
  await using core = startFaultyUpstream({ kind: "stall" });
  const { gateway, pay } = await keeping(core.url);
  try {
    const id = crypto.randomUUID();
    const first = await pay(id);
    assert.equal(first.status, 503);
    await first.body?.cancel();
    const again = await pay(id);
    assert.equal(again.headers.get("x-idempotent-replay"), "true");
    await again.body?.cancel();
    assert.equal(core.requests.length, 1);
    core.refuse();
    const refusedId = crypto.randomUUID();
    const refused = await pay(refusedId);
    assert.equal(refused.status, 503);
    await refused.body?.cancel();
    core.listen();
    core.fault = paymentCreated();
    const retried = await pay(refusedId);
    assert.equal(retried.status, 201);
    assert.equal(retried.headers.get("x-idempotent-replay"), null);
    await retried.body?.cancel();
  } finally {
    await gateway.close();
  }
});

Deno.test("proxy() passes a 205 the core sent with a body as a 205 without content", async () => {
  await using core = startFaultyUpstream({
    kind: "raw",
    parts: [{ bytes: rawAnswer(205, ["content-type: application/json"], '{"a":1}') }],
    then: "close",
  });
  await using gateway = await startGateway({ policy: policy(), upstream: core.url });
  const response = await gateway.fetch("/v1/consents/c-1", { headers: { "x-request-id": ID } });
  assert.equal(response.status, 205);
  assert.equal(await response.text(), "");
});

Deno.test("proxy() adds no-store to every answer under no_store: always, public data included", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({
    policy: policy({ no_store: "always" }),
    upstream: upstream.url,
  });
  const response = await gateway.fetch("/v1/products/en/deposits");
  await response.body?.cancel();
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("cache-control"), "no-store");
});

Deno.test("proxy() tells the core the scheme the client used: https", async () => {
  await using upstream = startUpstream();
  await using gateway = await gatewayApp({ policy: policy(), upstream: upstream.url });
  const response = await gateway.fetch("https://gateway.example/v1/consents/c-1", {
    headers: { "x-request-id": ID },
  });
  await response.body?.cancel();
  assert.equal(response.status, 200);
  assert.equal(upstream.received[0].headers.get("x-forwarded-proto"), "https");
});

Deno.test("proxy() never forwards a header a check dropped", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({ policy: policy(), upstream: upstream.url });
  const response = await gateway.fetch("/v1/payments/domestic", {
    method: "POST",
    headers: initiationHeaders({
      "x-request-id": ID,
      "tpp-decoupled-preferred": "maybe",
      "tpp-rejection-nofunds-preferred": "true",
    }),
    body: JSON.stringify(singlePayment()),
  });
  await response.body?.cancel();
  assert.equal(response.status, 200);
  assert.equal(upstream.received[0].headers.get("tpp-decoupled-preferred"), null);
  assert.equal(upstream.received[0].headers.get("tpp-rejection-nofunds-preferred"), "true");
});

Deno.test("proxy() reports each header it leaves out, once, under unlisted_headers: report", async () => {
  await using upstream = startUpstream();
  await using gateway = await gatewayApp({
    policy: policy({ unlisted_headers: "report" }),
    upstream: upstream.url,
  });
  const sent = { "x-request-id": ID, "x-original-url": "/admin", "consent-id": "c1" };
  const response = await gateway.fetch("/v1/consents/c-1", { headers: sent });
  await response.body?.cancel();
  const line = gateway.log.lines.find((l) => l.request_id === ID && l.op)!;
  const findings = line.findings as Record<string, unknown>[];
  assert.deepEqual(findings.find((f) => f.path === "X-Original-Url"), {
    check: "proxy",
    mode: "report",
    code: "FORMAT_ERROR",
    path: "X-Original-Url",
    dropped: true,
  });
  // Only names the request carried (Deno's fetch adds its defaults; the gateway's own none).
  const carried = new Set([...Object.keys(sent), "accept-language", "user-agent", "host"]);
  for (const finding of findings) {
    assert.ok(carried.has(String(finding.path).toLowerCase()), String(finding.path));
  }
  assert.equal(new Set(findings.map((f) => f.path)).size, findings.length, "each once");
});

Deno.test("proxy() passes JSON untouched where no response filter is on, and never rewrites a non-JSON answer", async () => {
  const linked = '{"_links":{"self":{"href":"/psd2/v1/consents/c-1"}}}';
  for (const [type, rewrite] of [["application/json", false], ["text/plain", true]] as const) {
    await using upstream = startUpstream(() =>
      new Response(linked, { headers: { "content-type": type } })
    );
    await using gateway = await startGateway({
      policy: policy({}, { defaults: { links: { rewrite } } }),
      upstream: upstream.url,
    });
    const response = await gateway.fetch("/v1/consents/c-1", { headers: { "x-request-id": ID } });
    assert.equal(response.status, 200, type);
    assert.equal(await response.text(), linked, type);
  }
});

Deno.test("proxy's options, their defaults and texts are what config/policy.schema.json documents", () => {
  // (tests/src/policy/load_test.ts checks the same for every check; here it runs with the proxy's
  // own tests, so that a changed default or text of the proxy fails them.)
  assert.equal(Deno.readTextFileSync("config/policy.schema.json"), policyJsonSchema(PIPELINE));
});

Deno.test("proxy() refuses a timeout longer than the runtime's timers allow (24 days)", async () => {
  await assert.rejects(
    () => startGateway({ policy: policy({ timeout: "25d" }), upstream: "http://127.0.0.1:1" }),
    /timeout/,
  );
});

Deno.test("proxy() drops a header it does not forward without a finding by default", async () => {
  await using upstream = startUpstream();
  await using gateway = await gatewayApp({ policy: policy(), upstream: upstream.url });
  const response = await gateway.fetch("/v1/consents/c-1", {
    headers: { "x-request-id": ID, "x-original-url": "/admin" },
  });
  await response.body?.cancel();
  assert.equal(response.status, 200);
  assert.equal(upstream.received[0].headers.get("x-original-url"), null);
  const line = gateway.log.lines.find((l) => l.request_id === ID && l.op)!;
  assert.equal(line.findings, undefined);
});

/** A payment initiation through a gateway in front of `core` with these proxy options. */
/** The policy part that lets a Location name the bank's SCA site. */
const SCA_LOCATIONS: PolicyInput = {
  defaults: { links: { location_origins: ["https://sca.bank.example"] } },
};

async function initiateThrough(
  core: string,
  proxy: LevelInput["proxy"] = {},
  ...parts: PolicyInput[]
) {
  await using gateway = await startGateway({ policy: policy(proxy, ...parts), upstream: core });
  const response = await gateway.fetch("/v1/payments/domestic", {
    method: "POST",
    headers: initiationHeaders({ "x-request-id": crypto.randomUUID() }),
    body: JSON.stringify(singlePayment()),
  });
  await response.body?.cancel();
  return response;
}

Deno.test("proxy() rewrites the core's Location, each of several values, wherever it stands", async () => {
  const internal = "http://core-7.internal:8443/psd2/v1/payments/domestic";
  const answers = [
    [[
      `location: ${internal}/pay-1`,
      "content-type: application/json",
      `location: ${internal}/pay-2`,
      "aspsp-sca-approach: REDIRECT",
    ], "/v1/payments/domestic/pay-1, /v1/payments/domestic/pay-2"],
    [
      ["content-type: application/json", `location: ${internal}/pay-3`],
      "/v1/payments/domestic/pay-3",
    ],
    [[
      "content-type: application/json",
      "location: https://sca.bank.example/x",
      "location: /psd2/v1/payments/domestic/pay-4",
    ], "https://sca.bank.example/x, /v1/payments/domestic/pay-4"],
  ] as const;
  for (const [lines, expected] of answers) {
    await using core = startFaultyUpstream({
      kind: "raw",
      parts: [{ bytes: rawAnswer(201, [...lines], '{"paymentId":"pay-1"}') }],
    });
    // The bank's SCA site is one the policy lets a Location name.
    const response = await initiateThrough(core.url, {}, SCA_LOCATIONS);
    assert.equal(response.status, 201);
    assert.equal(response.headers.get("location"), expected);
    assert.equal(response.headers.get("content-type"), "application/json");
  }
});

Deno.test("proxy() forwards a header the policy names in any case, and the certificate header of a verified certificate", async () => {
  const ca = await createCa();
  const tpp = await issue(ca);
  await using core = startFaultyUpstream();
  await using gateway = await startGateway({
    policy: policy({ forward_headers: ["X-Bank-Channel"] }, {
      trust: { anchors: [ca.pem] },
      defaults: { tpp_certificate: { mode: "enforce" } },
    }),
    upstream: core.url,
  });
  const response = await gateway.fetch("/v1/payments/domestic", {
    method: "POST",
    headers: initiationHeaders({
      "x-request-id": ID,
      "x-bank-channel": "app",
      "x-ssl-client-cert": nginxHeader(tpp),
    }),
    body: JSON.stringify(singlePayment()),
  });
  await response.body?.cancel();
  assert.equal(response.status, 201);
  assert.equal(core.requests[0].headers.get("x-bank-channel"), "app");
  assert.equal(core.requests[0].headers.get("x-ssl-client-cert"), nginxHeader(tpp));
});

Deno.test("proxy() keeps its own Content-Encoding, X-Content-Type-Options and Cache-Control rules over the policy's answer_headers", async () => {
  const answer = rawAnswer(200, [
    "content-type: application/json",
    "content-encoding: identity",
    "x-content-type-options: sniff-me",
    "cache-control: private, max-age=60",
  ], '{"consentStatus":"valid"}');
  const named = ["Content-Encoding", "X-Content-Type-Options", "Cache-Control"];
  for (
    const [noStore, cacheControl] of [["sensitive", "no-store"], [
      "never",
      "private, max-age=60",
    ]] as const
  ) {
    await using core = startFaultyUpstream({ kind: "raw", parts: [{ bytes: answer }] });
    await using gateway = await startGateway({
      policy: policy({ answer_headers: named, no_store: noStore }),
      upstream: core.url,
    });
    const response = await gateway.fetch("/v1/consents/c-1/status", {
      headers: { "x-request-id": ID },
    });
    assert.deepEqual(await response.json(), { consentStatus: "valid" });
    assert.equal(response.headers.get("content-encoding"), null, noStore);
    assert.equal(response.headers.get("x-content-type-options"), "nosniff", noStore);
    assert.equal(response.headers.get("cache-control"), cacheControl, noStore);
  }
});

Deno.test("proxy() passes a repeated Location that needs no rewriting line by line, as the core sent it", async () => {
  await using core = startFaultyUpstream({
    kind: "raw",
    parts: [{
      bytes: rawAnswer(201, [
        "content-type: application/json",
        "location: https://sca.bank.example/a",
        "location: https://sca.bank.example/b",
      ], '{"paymentId":"pay-1"}'),
    }],
  });
  await using gateway = await startGateway({
    policy: policy({}, SCA_LOCATIONS),
    upstream: core.url,
  });
  const body = JSON.stringify(singlePayment());
  const headers = {
    ...initiationHeaders({ "x-request-id": ID }),
    host: "gateway",
    connection: "close",
    "content-length": String(body.length),
  };
  // A raw read of the answer: `Headers` would join the two lines.
  const conn = await Deno.connect({
    hostname: "127.0.0.1",
    port: Number(new URL(gateway.url).port),
  });
  const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join("");
  await conn.write(
    new TextEncoder().encode(`POST /v1/payments/domestic HTTP/1.1\r\n${head}\r\n${body}`),
  );
  const text = new TextDecoder().decode(await new Response(conn.readable).arrayBuffer());
  const lines = text.split("\r\n\r\n")[0].split("\r\n");
  assert.equal(lines[0], "HTTP/1.1 201 Created");
  assert.deepEqual(lines.filter((line) => line.toLowerCase().startsWith("location:")), [
    "location: https://sca.bank.example/a",
    "location: https://sca.bank.example/b",
  ]);
});
