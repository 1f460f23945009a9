import assert from "node:assert/strict";
import { startGateway } from "../../support/gateway.ts";
import { startUpstream } from "../../support/upstream.ts";
import { OPERATIONS } from "../../../src/psd2/catalogue.ts";
import { passthroughPolicy } from "../../support/policies.ts";
import type { UpstreamAnswer } from "../../../src/upstream/mod.ts";

const ID = "0d9e7f6a-5b4c-4d3e-8f2a-1b0c9d8e7f6a";
// Routing and logging are tested alone: the other checks are off.
const POLICY = passthroughPolicy();

Deno.test("createApp() answers 404 RESOURCE_UNKNOWN in Berlin Group form for unknown paths", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({ policy: POLICY, upstream: upstream.url });
  for (const path of ["/", "/v2/accounts", "/v1/accounts/a/b/c/d/e", "/psd2/v1/accounts"]) {
    const response = await gateway.fetch(path, { headers: { "x-request-id": ID } });
    assert.equal(response.status, 404, path);
    assert.equal(response.headers.get("x-request-id"), ID);
    const body = await response.json();
    assert.deepEqual(Object.keys(body.tppMessages[0]), ["category", "code", "text"]);
    assert.equal(body.tppMessages[0].code, "RESOURCE_UNKNOWN");
  }
  assert.equal(upstream.received.length, 0);
});

Deno.test("createApp() answers 405 SERVICE_INVALID with Allow for a known path and wrong method", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({ policy: POLICY, upstream: upstream.url });
  const cases: [string, string, string][] = [
    ["PATCH", "/v1/payments/domestic/p-1", "GET, DELETE"],
    ["POST", "/v1/accounts", "GET"],
    ["PUT", "/v1/consents/c-1", "GET, DELETE"],
    ["GET", "/v1/consents", "POST"],
    ["DELETE", "/v1/products/en", "GET"],
    ["POST", "/v1/accounts/a-1/balances", "GET"],
  ];
  for (const [method, path, allow] of cases) {
    const response = await gateway.fetch(path, { method, headers: { "x-request-id": ID } });
    assert.equal(response.status, 405, `${method} ${path}`);
    assert.equal(response.headers.get("allow"), allow, `${method} ${path}`);
    assert.equal((await response.json()).tppMessages[0].code, "SERVICE_INVALID");
  }
  // HEAD is no method of the interface: a GET route must not run (and count) a read for it.
  for (const [path, allow] of [["/v1/accounts", "GET"], ["/v1/consents/c-1", "GET, DELETE"]]) {
    const response = await gateway.fetch(path, { method: "HEAD", headers: { "x-request-id": ID } });
    await response.body?.cancel();
    assert.equal(response.status, 405, `HEAD ${path}`);
    assert.equal(response.headers.get("allow"), allow, `HEAD ${path}`);
  }
  assert.equal(upstream.received.length, 0);
});

Deno.test("createApp() routes literal segments before parameters", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({ policy: POLICY, upstream: upstream.url });
  const expectations: [string, string][] = [
    ["/v1/accounts/a-1/balances", "/psd2/v1/accounts/a-1/balances"],
    ["/v1/consents/c-1/status", "/psd2/v1/consents/c-1/status"],
    ["/v1/products/deposits", "/v1/products/deposits"],
    ["/v1/products/en/cards?page=1", "/v1/products/en/cards?page=1"],
    [
      "/v1/services/installment/calculate?amount=10",
      "/v1/services/installment/calculate?amount=10",
    ],
    ["/v1/payments/domestic/p-1/status", "/psd2/v1/payments/domestic/p-1/status"],
  ];
  for (const [path, upstreamPath] of expectations) {
    const response = await gateway.fetch(path, { headers: { "x-request-id": ID } });
    await response.body?.cancel();
    assert.equal(response.status, 200, path);
    assert.equal(upstream.received.at(-1)?.path, upstreamPath);
  }
});

Deno.test("createApp() registers a route for every operation of the catalogue", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({ policy: POLICY, upstream: upstream.url });
  for (const op of OPERATIONS) {
    const path = op.path.replace(/\{[^}]+\}/g, (m) => m === "{locale}" ? "en" : "x1");
    const response = await gateway.fetch(path, {
      method: op.method,
      headers: { "x-request-id": ID, "content-type": "application/json" },
      body: op.method === "POST" || op.method === "PUT" ? "{}" : undefined,
    });
    await response.body?.cancel();
    assert.equal(response.status, 200, `${op.id} ${op.method} ${path}`);
  }
  assert.equal(upstream.received.length, OPERATIONS.length);
});

Deno.test("createApp() hides unknown failures behind a generic 500 and logs them", async () => {
  await using gateway = await startGateway({
    policy: POLICY,
    upstream: "http://127.0.0.1:9",
    services: {
      // An upstream client that breaks its contract: the proxy fails outside its error mapping.
      upstream: {
        send: () => Promise.resolve({ status: 200 } as unknown as UpstreamAnswer),
        close() {},
      },
    },
  });
  const response = await gateway.fetch("/v1/consents/c-1", { headers: { "x-request-id": ID } });
  const text = await response.text();
  assert.equal(response.status, 500);
  assert.equal(JSON.parse(text).tppMessages[0].code, "INTERNAL_ERROR");
  assert.equal(response.headers.get("x-request-id"), ID);
  assert.doesNotMatch(text, /secret|TypeError|iterable/);
  assert.ok(gateway.log.lines.some((l) => l.msg === "unhandled error" && l.request_id === ID));
});

Deno.test("accessLog() writes one line per request with masked account ids", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({ policy: POLICY, upstream: upstream.url });
  const response = await gateway.fetch("/v1/accounts/GE29NB0000000101904917/balances", {
    headers: { "x-request-id": ID, "psu-id": "PSU-123456789" },
  });
  await response.body?.cancel();
  const line = gateway.log.lines.find((l) => l.op === "getBalances")!;
  assert.equal(line.request_id, ID);
  assert.equal(line.status, 200);
  assert.equal(line.upstream_status, 200);
  assert.equal(line.path, "/v1/accounts/GE***17/balances");
  assert.equal(line.psu, "PS***89");
  assert.doesNotMatch(JSON.stringify(gateway.log.lines), /GE29NB0000000101904917|PSU-123456789/);
});

Deno.test("accessLog() masks the id's own segment, not an earlier one that contains its value", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({ policy: POLICY, upstream: upstream.url });
  for (
    const [path, logged] of [
      ["/v1/accounts/a/balances", "/v1/accounts/***/balances"],
      ["/v1/accounts/accounts/balances", "/v1/accounts/ac***ts/balances"],
      ["/v1/accounts/v1/transactions/v1", "/v1/accounts/***/transactions/***"],
    ]
  ) {
    const response = await gateway.fetch(path, { headers: { "x-request-id": ID } });
    await response.body?.cancel();
    assert.equal(gateway.log.lines.at(-1)!.path, logged);
  }
});

Deno.test("healthz and readyz answer outside the interface paths", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({ policy: POLICY, upstream: upstream.url });
  assert.equal((await gateway.fetch("/healthz")).status, 200);
  assert.equal((await gateway.fetch("/readyz")).status, 200);
  await using down = await startGateway({ policy: POLICY, upstream: "http://127.0.0.1:9" });
  const ready = await down.fetch("/readyz");
  assert.equal(ready.status, 503);
  await ready.body?.cancel();
});
