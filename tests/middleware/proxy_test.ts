import assert from "node:assert/strict";
import { startGateway } from "../support/gateway.ts";
import { closedPort, startUpstream } from "../support/upstream.ts";
import { initiationHeaders, singlePayment } from "../support/requests.ts";
import { buildPolicy, type LevelInput, type PolicyInput } from "../support/policies.ts";

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
        return Response.json({ method: request.method, body: await request.text() });
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
    invalid.log.some((line) => line.level === "warn" && String(line.msg).includes("UTF-8")),
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
