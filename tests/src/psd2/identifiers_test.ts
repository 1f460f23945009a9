import assert from "node:assert/strict";
import { operation } from "../../../src/psd2/catalogue.ts";
import { canonicalId, identifiers, identifiersSection } from "../../../src/psd2/identifiers.ts";

const UPPER = "5B1F3C2E-7A41-4D6B-9C0E-00000000000A";

Deno.test("canonicalId() lowers a UUID always, another id only when compared without case", () => {
  assert.equal(canonicalId(UPPER, false), UPPER.toLowerCase());
  assert.equal(canonicalId(UPPER, true), UPPER.toLowerCase());
  assert.equal(canonicalId("Acc-1", true), "acc-1");
  assert.equal(canonicalId("Acc-1", false), "Acc-1");
  // Java's equalsIgnoreCase takes these for the same id: so must the gateway.
  assert.equal(canonicalId("\u017F", true), canonicalId("s", true), "long s and s");
  assert.equal(canonicalId("\u212A", true), canonicalId("k", true), "Kelvin sign and k");
});

Deno.test("identifiers() compares every kind without case by default, as the policy says otherwise", () => {
  const ids = identifiers(identifiersSection.parse({}));
  for (const kind of ["consent_id", "resource_id", "psu_id", "request_id"] as const) {
    assert.equal(ids.id(kind, "Alice"), "alice", kind);
  }
  const sensitive = identifiers(identifiersSection.parse({ case: { psu_id: "sensitive" } }));
  assert.equal(sensitive.id("psu_id", "Alice"), "Alice");
  assert.equal(sensitive.id("psu_id", UPPER), UPPER.toLowerCase(), "a UUID PSU-ID");
  assert.equal(sensitive.id("resource_id", "Acc-1"), "acc-1");
  assert.throws(() => identifiersSection.parse({ case: { account: "sensitive" } }));
  assert.throws(() => identifiersSection.parse({ ipv6_prefix: 16 }));
});

Deno.test("identifiers().path() gives the operation's path with its ids in canonical form", () => {
  const ids = identifiers(identifiersSection.parse({ case: { consent_id: "sensitive" } }));
  assert.equal(
    ids.path(operation("getTransactionDetails"), { "account-id": "ACC-1", transactionId: "T9" }),
    "/v1/accounts/acc-1/transactions/t9",
  );
  assert.equal(
    ids.path(operation("cancelPayment"), {
      "payment-service": "payments",
      "payment-product": "domestic",
      paymentId: "PAY-1",
    }),
    "/v1/payments/domestic/pay-1",
  );
  assert.equal(
    ids.path(operation("getConsentStatus"), { consentId: "Con-1" }),
    "/v1/consents/Con-1/status",
    "consent ids compared with case here",
  );
});
