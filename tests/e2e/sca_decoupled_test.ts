/**
 * The decoupled approach through the gateway: with `TPP-Decoupled-Preferred: true` the PSU's app
 * answers by itself after the sandbox's delay (or at once by the approve control), so a TPP polls
 * the SCA status until it is final.
 */
import assert from "node:assert/strict";
import { type Bank, createConsent, initiatePayment, startBank } from "./bank.ts";
import { call } from "./flow.ts";

const DECOUPLED = { "tpp-decoupled-preferred": "true" };

/** Polls the SCA status every 50 ms until it is final; returns every status seen. */
async function pollUntilFinal(bank: Bank, href: string, timeoutMs = 10_000): Promise<string[]> {
  const seen: string[] = [];
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const read = await call(bank.gateway, "GET", href);
    assert.equal(read.status, 200);
    // The standard defines ASPSP-SCA-Approach on writes only: the gateway passes no other.
    assert.equal(read.headers.get("aspsp-sca-approach"), null);
    seen.push(read.body.scaStatus);
    if (["finalised", "failed"].includes(read.body.scaStatus)) return seen;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`The authorisation did not become final in time: ${seen.join(", ")}`);
}

Deno.test("e2e decoupled: a payment's authorisation is finalised by the PSU's app after the delay; the TPP polls until then", async () => {
  await using bank = await startBank({ decoupledDelayMs: 1500 });
  const created = await initiatePayment(bank, { ...DECOUPLED, "psu-id": "PSU-OK" });
  assert.equal(created.headers.get("aspsp-sca-approach"), "DECOUPLED");
  assert.equal(created.body._links.scaRedirect, undefined);
  const href = created.body._links.scaStatus.href;
  const seen = await pollUntilFinal(bank, href);
  assert.equal(seen[0], "psuIdentified", "the push to the app is out, not yet answered");
  assert.equal(seen.at(-1), "finalised");
  const status = await call(bank.gateway, "GET", created.body._links.status.href);
  assert.equal(status.body.transactionStatus, "ACCP");
});

Deno.test("e2e decoupled: without PSU-ID the TPP identifies the PSU with an empty update, then polls", async () => {
  await using bank = await startBank({ decoupledDelayMs: 200 });
  const created = await createConsent(bank, DECOUPLED);
  const href = created.body._links.scaStatus.href;
  const received = await call(bank.gateway, "GET", href);
  assert.equal(received.body.scaStatus, "received");
  assert.equal(received.body._links.updatePsuIdentification.href, href);
  const identified = await call(bank.gateway, "PUT", href, {
    body: {},
    headers: { "psu-id": "PSU-OK" },
  });
  assert.equal(identified.status, 200);
  assert.equal(identified.body.scaStatus, "psuIdentified");
  assert.match(identified.body.psuMessage, /app/);
  assert.equal((await pollUntilFinal(bank, href)).at(-1), "finalised");
  const status = await call(bank.gateway, "GET", `/v1/consents/${created.body.consentId}/status`);
  assert.equal(status.body.consentStatus, "valid");
});

Deno.test("e2e decoupled: the sandbox control approves an authorisation at once", async () => {
  await using bank = await startBank({ decoupledDelayMs: 600_000 });
  const created = await initiatePayment(bank, { ...DECOUPLED, "psu-id": "PSU-OK" });
  const href = created.body._links.scaStatus.href;
  assert.equal((await call(bank.gateway, "GET", href)).body.scaStatus, "psuIdentified");
  const id = href.split("/").at(-1);
  const approved = await bank.control("POST", `/sandbox/authorisations/${id}/approve`);
  assert.deepEqual(approved, {
    status: 200,
    body: { authorisationId: id, scaStatus: "finalised" },
  });
  assert.equal((await call(bank.gateway, "GET", href)).body.scaStatus, "finalised");
  const again = await bank.control("POST", `/sandbox/authorisations/${id}/deny`);
  assert.equal(again.status, 409);
});

Deno.test("e2e decoupled: PSU-SCA-FAIL's app refuses; the authorisation fails and the payment is rejected", async () => {
  await using bank = await startBank({ decoupledDelayMs: 200 });
  const created = await initiatePayment(bank, { ...DECOUPLED, "psu-id": "PSU-SCA-FAIL" });
  assert.equal((await pollUntilFinal(bank, created.body._links.scaStatus.href)).at(-1), "failed");
  const status = await call(bank.gateway, "GET", created.body._links.status.href);
  assert.equal(status.body.transactionStatus, "RJCT");
});
