/**
 * Issue 18.13: core headers and redirects leaked. `x-internal-host`, `x-debug-trace`, `set-cookie`
 * and `Location: http://core-7.internal:8443/psd2/v1/...` passed to the TPP. The answer now
 * carries only the headers the interface defines for the operation plus the policy's allow-list,
 * and `Location` is rewritten to the public prefix like `_links`.
 */
import assert from "node:assert/strict";
import { rawAnswer, startFaultyUpstream } from "../support/faulty_upstream.ts";
import { startGateway } from "../support/gateway.ts";
import { tokenIssuer } from "../support/tpp_tokens.ts";
import { initiationHeaders, singlePayment } from "../support/requests.ts";
import { buildPolicy, type LevelInput, type PolicyInput } from "../support/policies.ts";

const LEAKS = [
  "x-internal-host: core-7.internal",
  "x-debug-trace: db=core7;sql=select+*+from+payments",
  "set-cookie: JSESSIONID=abc123; Path=/",
  "x-backend-node: core-07",
  "x-powered-by: CoreBanking",
  "x-aspnet-version: 4.0.30319",
  "server: legacy-core/7.2",
  "access-control-allow-origin: *",
  "strict-transport-security: max-age=0",
  "refresh: 0; url=https://evil.example",
];

function policy(proxy: LevelInput["proxy"] = {}, ...parts: PolicyInput[]) {
  return buildPolicy({
    upstream: { url: "${UPSTREAM_URL}", prefix: "/psd2/v1" },
    defaults: { proxy },
  }, ...parts);
}

function created(location: string, extra: string[] = []) {
  return rawAnswer(
    201,
    [
      "content-type: application/json",
      `location: ${location}`,
      "aspsp-sca-approach: REDIRECT",
      ...LEAKS,
      ...extra,
    ],
    JSON.stringify({ transactionStatus: "RCVD", paymentId: "pay-1" }),
  );
}

async function pay(
  gateway: { fetch(path: string, init?: RequestInit): Promise<Response> },
  id = crypto.randomUUID(),
  extra: Record<string, string> = {},
) {
  return await gateway.fetch("/v1/payments/domestic", {
    method: "POST",
    headers: initiationHeaders({ "x-request-id": id, ...extra }),
    body: JSON.stringify(singlePayment()),
  });
}

function leaked(response: Response): string[] {
  return LEAKS.map((line) => line.slice(0, line.indexOf(":")))
    .filter((name) => response.headers.has(name));
}

Deno.test("the core's own headers never reach the TPP; the interface's answer headers do", async () => {
  await using core = startFaultyUpstream({
    kind: "raw",
    parts: [{ bytes: created("/psd2/v1/payments/domestic/pay-1") }],
  });
  await using gateway = await startGateway({ policy: policy(), upstream: core.url });
  const response = await pay(gateway);
  await response.body?.cancel();
  assert.equal(response.status, 201);
  assert.deepEqual(leaked(response), []);
  assert.equal(response.headers.get("aspsp-sca-approach"), "REDIRECT");
  assert.equal(response.headers.get("content-type"), "application/json");
  assert.equal(response.headers.get("location"), "/v1/payments/domestic/pay-1");
  assert.equal(core.requests.length, 1);
});

Deno.test("a Location naming an internal host is rewritten to the public prefix, in the replay too", async () => {
  await using core = startFaultyUpstream({
    kind: "raw",
    parts: [{ bytes: created("http://core-7.internal:8443/psd2/v1/payments/domestic/pay-1") }],
  });
  // Idempotency keeps the answer for a replay to the same identified TPP.
  const issuer = await tokenIssuer();
  await using gateway = await startGateway({
    policy: policy({}, {
      defaults: { idempotency: { mode: "enforce" }, bearer_token: issuer.options },
    }),
    upstream: core.url,
  });
  const tpp = await issuer.headers("PSDGE-NBG-123456");
  const id = crypto.randomUUID();
  for (const replay of [false, true]) {
    const response = await pay(gateway, id, tpp);
    await response.body?.cancel();
    assert.equal(response.status, 201);
    assert.equal(response.headers.get("x-idempotent-replay"), replay ? "true" : null);
    assert.equal(response.headers.get("location"), "/v1/payments/domestic/pay-1");
    assert.deepEqual(leaked(response), []);
  }
  assert.equal(core.requests.length, 1);
});

Deno.test("a read's answer carries no Location, and the policy's allow-list passes a named header", async () => {
  await using core = startFaultyUpstream({
    kind: "raw",
    parts: [{
      bytes: rawAnswer(200, [
        "content-type: application/json",
        "location: http://core-7.internal:8443/psd2/v1/consents/c-1",
        "x-bank-trace-id: t-1",
        ...LEAKS,
      ], '{"consentStatus":"valid"}'),
    }],
  });
  await using gateway = await startGateway({
    policy: policy({ answer_headers: ["X-Bank-Trace-ID"] }),
    upstream: core.url,
  });
  const response = await gateway.fetch("/v1/consents/c-1/status", {
    headers: { "x-request-id": crypto.randomUUID() },
  });
  assert.deepEqual(await response.json(), { consentStatus: "valid" });
  assert.equal(response.headers.get("location"), null);
  assert.equal(response.headers.get("x-bank-trace-id"), "t-1");
  assert.deepEqual(leaked(response), []);
});

Deno.test("a Location the policy's allow-list passes on a read is rewritten too, never leaked", async () => {
  // The interface gives a read no Location, so links rewrote it only where it does; a policy that
  // lets the core's Location through (answer_headers) then passed the internal host on.
  await using core = startFaultyUpstream({
    kind: "raw",
    parts: [{
      bytes: rawAnswer(200, [
        "content-type: application/json",
        "location: http://core-7.internal:8443/psd2/v1/consents/c-1",
      ], '{"consentStatus":"valid"}'),
    }],
  });
  await using gateway = await startGateway({
    policy: policy({ answer_headers: ["Location"] }),
    upstream: core.url,
  });
  const response = await gateway.fetch("/v1/consents/c-1/status", {
    headers: { "x-request-id": crypto.randomUUID() },
  });
  assert.deepEqual(await response.json(), { consentStatus: "valid" });
  assert.equal(response.headers.get("location"), "/v1/consents/c-1");
});

/** Headers of the core that stay hidden whatever the policy's `answer_headers` names. */
const ALWAYS_HIDDEN = [
  "server: legacy-core/7.2",
  "x-powered-by: CoreBanking",
  "x-aspnet-version: 4.0.30319",
  "x-aspnetmvc-version: 5.2",
  "via: 1.1 core-gw.internal",
  "keep-alive: timeout=5",
  "proxy-connection: keep-alive",
  "proxy-authenticate: Basic realm=core",
  "trailer: x-checksum",
  "upgrade: h2c",
  "te: trailers",
  "content-encoding: identity",
  "x-idempotent-replay: true",
];

Deno.test("the core's internal and hop-by-hop headers stay hidden even when the policy passes them by name", async () => {
  const named = ALWAYS_HIDDEN.map((line) => line.slice(0, line.indexOf(":")));
  await using core = startFaultyUpstream({
    kind: "raw",
    parts: [{
      bytes: rawAnswer(200, [
        "content-type: application/json",
        ...ALWAYS_HIDDEN,
        "x-content-type-options: sniff-me",
        "cache-control: public, max-age=3600",
      ], '{"consentStatus":"valid"}'),
    }],
  });
  await using gateway = await startGateway({
    policy: policy({ answer_headers: [...named, "X-Content-Type-Options", "Cache-Control"] }),
    upstream: core.url,
  });
  const response = await gateway.fetch("/v1/consents/c-1/status", {
    headers: { "x-request-id": crypto.randomUUID() },
  });
  assert.deepEqual(await response.json(), { consentStatus: "valid" });
  for (const name of named) assert.equal(response.headers.get(name), null, name);
  // The gateway's own values replace the core's.
  assert.equal(response.headers.get("x-content-type-options"), "nosniff");
  assert.equal(response.headers.get("cache-control"), "no-store");
});

Deno.test("no_store: never passes the core's Cache-Control when the policy names it, always replaces it with no-store", async () => {
  const answer = rawAnswer(200, [
    "content-type: application/json",
    "cache-control: private, max-age=60",
  ], '{"consentStatus":"valid"}');
  await using core = startFaultyUpstream({ kind: "raw", parts: [{ bytes: answer }] });
  for (const [noStore, expected] of [["never", "private, max-age=60"], ["always", "no-store"]]) {
    await using gateway = await startGateway({
      policy: policy({ answer_headers: ["Cache-Control"], no_store: noStore as "never" }),
      upstream: core.url,
    });
    const response = await gateway.fetch("/v1/consents/c-1/status", {
      headers: { "x-request-id": crypto.randomUUID() },
    });
    await response.body?.cancel();
    assert.equal(response.headers.get("cache-control"), expected, noStore);
  }
});

Deno.test("two Location headers from the core are each rewritten: neither names the internal host", async () => {
  const internal = "http://core-7.internal:8443/psd2/v1/payments/domestic";
  for (const client of ["http1", "fetch"] as const) {
    await using core = startFaultyUpstream({
      kind: "raw",
      parts: [{
        bytes: rawAnswer(201, [
          `location: ${internal}/pay-1`,
          "content-type: application/json",
          `location: ${internal}/pay-2`,
        ], JSON.stringify({ transactionStatus: "RCVD", paymentId: "pay-1" })),
      }],
    });
    await using gateway = await startGateway({
      policy: policy({}, { upstream: { url: "${UPSTREAM_URL}", prefix: "/psd2/v1", client } }),
      upstream: core.url,
    });
    const response = await pay(gateway);
    await response.body?.cancel();
    assert.equal(response.status, 201, client);
    assert.equal(
      response.headers.get("location"),
      "/v1/payments/domestic/pay-1, /v1/payments/domestic/pay-2",
      client,
    );
  }
});
