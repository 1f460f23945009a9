/** Security events: one ECS line per refusal for a security reason, PSU data masked. */
import assert from "node:assert/strict";
import { gatewayApp } from "../../support/gateway.ts";
import { initiationHeaders, singlePayment } from "../../support/requests.ts";
import { securityEvent, securityReason } from "../../../src/http/security_events.ts";
import type { Finding } from "../../../src/core/check.ts";

function events(log: { lines: Record<string, unknown>[] }) {
  return log.lines.filter((l) =>
    (l.event as { dataset?: string } | undefined)?.dataset === "xs2a_edge.security"
  );
}

Deno.test("securityEvent(): a certificate refusal is one ECS alert with TPP, operation, rule, severity and request id", async () => {
  await using gateway = await gatewayApp({ upstream: "http://127.0.0.1:9" });
  const id = crypto.randomUUID();
  const response = await gateway.fetch("/v1/accounts", {
    headers: {
      "x-request-id": id,
      "consent-id": "c-1",
      "psu-ip-address": "192.0.2.10",
      "x-ssl-client-cert": "not-a-certificate",
    },
  });
  assert.equal(response.status, 401);
  await response.body?.cancel();
  const [event, ...more] = events(gateway.log) as Record<string, Record<string, unknown>>[];
  assert.equal(more.length, 0);
  assert.equal(event["@timestamp"], event.time);
  assert.deepEqual(event.ecs, { version: "8.11.0" });
  assert.deepEqual(
    { ...event.event },
    {
      kind: "alert",
      dataset: "xs2a_edge.security",
      module: "xs2a_edge",
      category: ["authentication"],
      type: ["denied"],
      action: "certificate",
      outcome: "failure",
      reason: "CERTIFICATE_INVALID",
      severity: 47,
    },
  );
  assert.deepEqual(event.rule, { name: "tpp_certificate", category: "certificate" });
  assert.deepEqual(event.http, {
    request: { id, method: "GET" },
    response: { status_code: 401 },
  });
  assert.equal((event.xs2a as Record<string, unknown>).operation, "getAccountList");
  assert.equal((event.xs2a as Record<string, unknown>).severity, "medium");
});

Deno.test("securityEvent(): a replayed X-Request-ID is a replay event with the PSU masked as in the access log", async () => {
  await using gateway = await gatewayApp({ upstream: "http://127.0.0.1:9" });
  const psuId = "PSU-ID-4711-SECRET";
  const headers = {
    ...initiationHeaders({ "psu-id": psuId }),
    "x-request-id": crypto.randomUUID(),
  };
  const body = JSON.stringify(singlePayment());
  for (const amount of ["1.00", "2.00"]) {
    const response = await gateway.fetch("/v1/payments/sepa-credit-transfers", {
      method: "POST",
      headers,
      body: body.replace(/"amount":"[^"]*"/, `"amount":"${amount}"`),
    });
    await response.body?.cancel();
  }
  const [event] = events(gateway.log) as Record<string, Record<string, unknown>>[];
  assert.equal(event.event.action, "replay");
  assert.equal(event.rule.name, "idempotency");
  const access = gateway.log.lines.find((l) => l.status === 400 && l.op === "initiatePayment")!;
  assert.equal(event.user.id, access.psu);
  assert.ok(!JSON.stringify(event).includes(psuId));
});

Deno.test("securityEvent(): a refusal for another reason is no event", async () => {
  await using gateway = await gatewayApp({ upstream: "http://127.0.0.1:9" });
  const response = await gateway.fetch("/v1/accounts", {
    headers: {
      "x-request-id": crypto.randomUUID(),
      "consent-id": "c-1",
      "psu-ip-address": "not-an-address",
    },
  });
  assert.equal(response.status, 400);
  await response.body?.cancel();
  assert.deepEqual(events(gateway.log), []);
});

function finding(check: string, code: string, extra: Partial<Finding> = {}): Finding {
  return { check, code, mode: "enforce", status: 401, text: "", ...extra };
}

Deno.test("securityReason() covers every reason the issue names, and only those", () => {
  assert.deepEqual(
    [
      finding("tpp_certificate", "CERTIFICATE_REVOKED"),
      finding("jws_signature", "SIGNATURE_INVALID"),
      finding("bearer_token", "TOKEN_EXPIRED"),
      finding("consent_scope", "CONSENT_INVALID"),
      finding("consent_frequency", "ACCESS_EXCEEDED"),
      finding("header_limits", "FORMAT_ERROR", { path: "Transfer-Encoding" }),
      finding("idempotency", "FORMAT_ERROR"),
      finding("rate_limit", "ACCESS_EXCEEDED"),
      finding("psu_ip_address", "FORMAT_ERROR"),
      finding("body_limit", "FORMAT_ERROR", { status: 413 }),
    ].map(securityReason),
    [
      "certificate",
      "signature",
      "token",
      "scope",
      "frequency",
      "smuggling",
      "replay",
      "rate_limit",
      undefined,
      undefined,
    ],
  );
  const facts = { time: "t", requestId: "r", method: "GET", path: "/v1/accounts", status: 401 };
  const revoked = securityEvent(finding("tpp_certificate", "CERTIFICATE_REVOKED"), facts)!;
  assert.equal((revoked.event as { severity: number }).severity, 73);
  const limited = securityEvent(finding("rate_limit", "ACCESS_EXCEEDED"), facts)!;
  assert.equal((limited.event as { severity: number }).severity, 21);
  // Another TPP's payment in a basket: as high as another TPP's consent.
  for (const check of ["consent_scope", "basket_scope"]) {
    const reached = securityEvent(finding(check, "RESOURCE_UNKNOWN", { status: 403 }), facts)!;
    assert.equal((reached.event as { severity: number }).severity, 73, check);
    assert.equal(securityReason(finding(check, "RESOURCE_UNKNOWN")), "scope");
  }
});
