/**
 * Each documented test user's behaviour, through the gateway (the embedded approach, so that no
 * browser is needed): PSU-OK succeeds, PSU-SCA-FAIL never passes the OTP, PSU-NO-FUNDS is rejected
 * for insufficient funds, PSU-MULTI needs two authorisations, PSU-EXPIRED's consents expire.
 */
import assert from "node:assert/strict";
import { type Bank, createConsent, initiatePayment, startBank } from "./bank.ts";
import { call } from "./flow.ts";

const MAIN_ID = "5b1f3c2e-7a41-4d6b-9c0e-000000000001";
const EMBEDDED = { "tpp-redirect-preferred": "false" };

/** Password, SMS method and an OTP on an authorisation; returns the last answer. */
async function embeddedSca(bank: Bank, href: string, otp = "123456") {
  const password = await call(bank.gateway, "PUT", href, {
    body: { psuData: { password: "sandbox" } },
  });
  assert.equal(password.status, 200, JSON.stringify(password.body));
  const method = await call(bank.gateway, "PUT", href, {
    body: { authenticationMethodId: "sms-otp" },
  });
  assert.equal(method.status, 200, JSON.stringify(method.body));
  return await call(bank.gateway, "PUT", href, { body: { scaAuthenticationData: otp } });
}

Deno.test("e2e test user PSU-OK: SCA succeeds, the payment is ACCP and the consent valid", async () => {
  await using bank = await startBank();
  const payment = await initiatePayment(bank, { ...EMBEDDED, "psu-id": "PSU-OK" });
  const done = await embeddedSca(bank, payment.body._links.scaStatus.href);
  assert.equal(done.body.scaStatus, "finalised");
  const status = await call(bank.gateway, "GET", payment.body._links.status.href);
  assert.deepEqual(status.body, { transactionStatus: "ACCP" });
  const consent = await createConsent(bank, { ...EMBEDDED, "psu-id": "PSU-OK" });
  await embeddedSca(bank, consent.body._links.scaStatus.href);
  const account = await call(bank.gateway, "GET", `/v1/accounts/${MAIN_ID}/balances`, {
    headers: { "consent-id": consent.body.consentId },
  });
  assert.equal(account.status, 200);
});

Deno.test("e2e test user PSU-SCA-FAIL: even the right OTP is wrong; the third fails the authorisation and rejects the consent", async () => {
  await using bank = await startBank();
  const consent = await createConsent(bank, { ...EMBEDDED, "psu-id": "PSU-SCA-FAIL" });
  const href = consent.body._links.scaStatus.href;
  const first = await embeddedSca(bank, href);
  assert.equal(first.status, 401);
  assert.equal(first.body.tppMessages[0].code, "PSU_CREDENTIALS_INVALID");
  for (const expected of ["2", "3"]) {
    const next = await call(bank.gateway, "PUT", href, {
      body: { scaAuthenticationData: "123456" },
    });
    assert.equal(next.status, 401, `attempt ${expected}`);
  }
  assert.equal((await call(bank.gateway, "GET", href)).body.scaStatus, "failed");
  const status = await call(bank.gateway, "GET", `/v1/consents/${consent.body.consentId}/status`);
  assert.equal(status.body.consentStatus, "rejected");
});

Deno.test("e2e test user PSU-NO-FUNDS: SCA succeeds, then the payment is RJCT with fundsAvailable false and FUNDS_NOT_AVAILABLE", async () => {
  await using bank = await startBank();
  const payment = await initiatePayment(bank, { ...EMBEDDED, "psu-id": "PSU-NO-FUNDS" });
  const done = await embeddedSca(bank, payment.body._links.scaStatus.href);
  assert.equal(done.body.scaStatus, "finalised");
  const status = await call(bank.gateway, "GET", payment.body._links.status.href);
  assert.equal(status.status, 200);
  assert.equal(status.body.transactionStatus, "RJCT");
  assert.equal(status.body.fundsAvailable, false);
  assert.match(status.body.psuMessage, /insufficient funds/);
  // The official OpenAPI file's form (accept.success_messages): the code leads the text.
  assert.equal(status.body.tppMessages[0].code, "ERROR");
  assert.match(status.body.tppMessages[0].text, /^FUNDS_NOT_AVAILABLE: .*AM04/);
  const read = await call(bank.gateway, "GET", payment.body._links.self.href);
  assert.equal(read.body.transactionStatus, "RJCT");
  assert.match(read.body.tppMessages[0].text, /^FUNDS_NOT_AVAILABLE: /);
});

Deno.test("e2e test user PSU-MULTI: the payment needs two authorisations (multilevel SCA): PATC after the first, ACCP after the second", async () => {
  await using bank = await startBank();
  const payment = await initiatePayment(bank, { ...EMBEDDED, "psu-id": "PSU-MULTI" });
  const links = payment.body._links;
  assert.equal(links.scaStatus, undefined);
  assert.equal(links.scaRedirect, undefined);
  const start = links.startAuthorisation.href;
  for (const [psu, expected] of [["PSU-MULTI", "PATC"], ["PSU-OK", "ACCP"]]) {
    const started = await call(bank.gateway, "POST", start, {
      body: {},
      headers: { "psu-id": psu },
    });
    assert.equal(started.status, 201);
    const done = await embeddedSca(bank, `${start}/${started.body.authorisationId}`);
    assert.equal(done.body.scaStatus, "finalised");
    const status = await call(bank.gateway, "GET", links.status.href);
    assert.equal(status.body.transactionStatus, expected);
  }
});

Deno.test("e2e test user PSU-EXPIRED: the consent authorises, then reads expired and account reads are 401 CONSENT_EXPIRED", async () => {
  await using bank = await startBank();
  const consent = await createConsent(bank, { ...EMBEDDED, "psu-id": "PSU-EXPIRED" });
  const done = await embeddedSca(bank, consent.body._links.scaStatus.href);
  assert.equal(done.body.scaStatus, "finalised");
  const read = await call(bank.gateway, "GET", `/v1/consents/${consent.body.consentId}`);
  assert.equal(read.body.consentStatus, "expired");
  assert.match(read.body.lastActionDate, /^\d{4}-\d{2}-\d{2}$/);
  const account = await call(bank.gateway, "GET", `/v1/accounts/${MAIN_ID}/balances`, {
    headers: { "consent-id": consent.body.consentId },
  });
  assert.equal(account.status, 401);
  assert.equal(account.body.tppMessages[0].code, "CONSENT_EXPIRED");
});
