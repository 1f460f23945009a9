/**
 * Issue 18.14: bypass headers reached the core. X-HTTP-Method-Override, X-Original-URL,
 * X-Rewrite-URL, client-sent X-Forwarded-Host and Forwarded, and header names with `_` reached
 * the core verbatim. The request to the core now carries only the headers the catalogue lists for
 * the operation, a few every operation needs, the gateway's own X-Forwarded-* and the policy's
 * allow-list; everything else is dropped (and logged as a finding when the policy says so).
 */
import assert from "node:assert/strict";
import { startFaultyUpstream } from "../support/faulty_upstream.ts";
import { gatewayApp, startGateway } from "../support/gateway.ts";
import { createCa, issue, nginxHeader } from "../support/pki.ts";
import { buildPolicy, type LevelInput, type PolicyInput } from "../support/policies.ts";
import { initiationHeaders, singlePayment } from "../support/requests.ts";

const BYPASS: Record<string, string> = {
  "X-HTTP-Method-Override": "DELETE",
  "X-HTTP-Method": "DELETE",
  "X-Method-Override": "DELETE",
  "X-Original-URL": "/psd2/v1/admin",
  "X-Rewrite-URL": "/psd2/v1/admin",
  "X-Forwarded-Host": "evil.example",
  "X-Forwarded-Port": "8443",
  "X-Forwarded-Prefix": "/admin",
  Forwarded: "for=10.0.0.1;host=evil.example;proto=https",
  "X-Real-IP": "10.0.0.1",
  "X_Request_ID": "b5a7c7f0-8a5e-4f0e-9d2c-1c7c2d7a0e11",
  "PSU_ID": "someone-else",
  "X-Internal-Debug": "1",
  Cookie: "session=abc",
};

function policy(proxy: LevelInput["proxy"] = {}, ...parts: PolicyInput[]) {
  return buildPolicy({
    upstream: { url: "${UPSTREAM_URL}", prefix: "/psd2/v1" },
    defaults: { proxy },
  }, ...parts);
}

/** The header lines of the head the core received, names in lower case. */
function receivedNames(head: string): string[] {
  return head.split("\r\n").slice(1).map((line) => line.slice(0, line.indexOf(":")).toLowerCase());
}

async function pay(
  gateway: { fetch(path: string, init?: RequestInit): Promise<Response> },
  extra: Record<string, string>,
) {
  return await gateway.fetch("/v1/payments/domestic", {
    method: "POST",
    headers: initiationHeaders({ "x-request-id": crypto.randomUUID(), ...extra }),
    body: JSON.stringify(singlePayment()),
  });
}

Deno.test("bypass headers (method override, original URL, forwarded host, `_` names) never reach the core", async () => {
  await using core = startFaultyUpstream();
  await using gateway = await startGateway({ policy: policy(), upstream: core.url });
  const response = await pay(gateway, BYPASS);
  await response.body?.cancel();
  assert.equal(response.status, 201);
  assert.equal(core.requests.length, 1);
  const names = receivedNames(core.requests[0].head);
  for (const name of Object.keys(BYPASS)) {
    assert.ok(!names.includes(name.toLowerCase()), `${name} reached the core`);
  }
  assert.equal(core.requests[0].method, "POST");
  assert.equal(core.requests[0].path, "/psd2/v1/payments/domestic");
});

Deno.test("the interface's headers, the media types, trace context and the gateway's X-Forwarded-* still reach the core", async () => {
  await using core = startFaultyUpstream();
  await using gateway = await startGateway({ policy: policy(), upstream: core.url });
  const sent = {
    "psu-id": "PSU-1",
    "psu-user-agent": "Mozilla/5.0",
    "tpp-redirect-uri": "https://tpp.example/back",
    "tpp-redirect-preferred": "true",
    "consent-id": "c-1",
    accept: "application/json",
    date: new Date().toUTCString(),
    traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    tracestate: "congo=t61rcWkgMzE",
    authorization: "Bearer token",
  };
  const response = await pay(gateway, sent);
  await response.body?.cancel();
  assert.equal(response.status, 201);
  const seen = core.requests[0].headers;
  for (const [name, value] of Object.entries(sent)) assert.equal(seen.get(name), value, name);
  assert.equal(seen.get("content-type"), "application/json");
  assert.equal(seen.get("psu-ip-address"), initiationHeaders()["psu-ip-address"]);
  assert.equal(seen.get("x-forwarded-for"), "127.0.0.1");
  assert.equal(seen.get("x-forwarded-proto"), "http");
});

Deno.test("a header the policy allows reaches the core; report mode logs each dropped one as a finding", async () => {
  await using core = startFaultyUpstream();
  await using gateway = await startGateway({
    policy: policy({ forward_headers: ["X-Bank-Channel"], unlisted_headers: "report" }),
    upstream: core.url,
  });
  const response = await pay(gateway, {
    "x-bank-channel": "mobile",
    "x-original-url": "/psd2/v1/admin",
    "x-http-method-override": "DELETE",
  });
  await response.body?.cancel();
  assert.equal(response.status, 201);
  const seen = core.requests[0].headers;
  assert.equal(seen.get("x-bank-channel"), "mobile");
  assert.equal(seen.get("x-original-url"), null);
  assert.equal(seen.get("x-http-method-override"), null);
  const line = gateway.log.lines.find((l) => l.op === "initiatePayment")!;
  const findings = (line.findings as { check: string; mode: string; path: string }[])
    .filter((f) => f.check === "proxy");
  // (fetch adds User-Agent and Accept-Language of its own: they are left out and reported too.)
  for (const name of ["X-Original-Url", "X-Http-Method-Override"]) {
    assert.ok(findings.some((f) => f.path === name && f.mode === "report"), name);
  }
  assert.ok(!findings.some((f) => f.path === "X-Bank-Channel"));
});

Deno.test("the certificate header reaches the core only when the gateway verified the certificate", async () => {
  const ca = await createCa();
  const tpp = await issue(ca);
  const forms = {
    nginx: ["x-ssl-client-cert", nginxHeader(tpp)],
    envoy: ["x-forwarded-client-cert", `Hash=abc;Cert="${nginxHeader(tpp)}"`],
    rfc9440: ["client-cert", `:${tpp.base64}:`],
  } as const;
  for (const [form, [name, value]] of Object.entries(forms)) {
    for (const verified of [true, false]) {
      await using core = startFaultyUpstream();
      await using gateway = await startGateway({
        policy: buildPolicy({
          trust: { anchors: [ca.pem] },
          defaults: {
            tpp_certificate: { mode: verified ? "enforce" : "off", form: form as "nginx" },
          },
        }),
        upstream: core.url,
      });
      const response = await pay(gateway, { [name]: value });
      await response.body?.cancel();
      assert.equal(response.status, 201, form);
      assert.equal(
        core.requests[0].headers.get(name),
        verified ? value : null,
        `${form} ${verified ? "verified" : "not verified"}`,
      );
    }
  }
});

/** The hop-by-hop request headers a client can send (Host and the framing ones are the client's own). */
const HOP_BY_HOP_SENT: Record<string, string> = {
  "keep-alive": "timeout=5",
  "proxy-connection": "keep-alive",
  "proxy-authenticate": "Basic",
  "proxy-authorization": "Basic c2VjcmV0",
  te: "trailers",
  trailer: "x-checksum",
  upgrade: "websocket",
};

Deno.test("hop-by-hop headers never reach the core, even when the policy forwards them by name, and are not reported", async () => {
  await using core = startFaultyUpstream();
  await using gateway = await gatewayApp({
    policy: policy({
      forward_headers: [...Object.keys(HOP_BY_HOP_SENT), "connection", "host", "content-length"],
      unlisted_headers: "report",
    }),
    upstream: core.url,
  });
  const response = await pay(gateway, { ...HOP_BY_HOP_SENT, connection: "x-secret" });
  await response.body?.cancel();
  assert.equal(response.status, 201);
  const names = receivedNames(core.requests[0].head);
  for (const name of Object.keys(HOP_BY_HOP_SENT)) {
    assert.ok(!names.includes(name), `${name} reached the core`);
  }
  assert.ok(!/x-secret/i.test(core.requests[0].head), "the client's Connection reached the core");
  assert.equal(names.filter((name) => name === "host").length, 1);
  assert.equal(core.requests[0].headers.get("host"), new URL(core.url).host);
  const line = gateway.log.lines.find((l) => l.op === "initiatePayment")!;
  const reported = ((line.findings ?? []) as { check: string; path: string }[])
    .filter((f) => f.check === "proxy").map((f) => f.path.toLowerCase());
  for (const name of [...Object.keys(HOP_BY_HOP_SENT), "connection", "host", "content-length"]) {
    assert.ok(!reported.includes(name), `${name} reported`);
  }
});

Deno.test("a read forwards the media types, Date and trace context too, though its operation lists none of them", async () => {
  await using core = startFaultyUpstream({
    kind: "answer",
    status: 200,
    headers: { "content-type": "application/json" },
    body: '{"consentStatus":"valid"}',
  });
  await using gateway = await startGateway({ policy: policy(), upstream: core.url });
  const sent = {
    "x-request-id": crypto.randomUUID(),
    accept: "application/json",
    "content-type": "application/json",
    date: new Date().toUTCString(),
    traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    tracestate: "congo=t61rcWkgMzE",
  };
  const response = await gateway.fetch("/v1/consents/c-1/status", { headers: sent });
  assert.equal(response.status, 200);
  await response.body?.cancel();
  const seen = core.requests[0].headers;
  for (const [name, value] of Object.entries(sent)) assert.equal(seen.get(name), value, name);
});
