/**
 * The embedded approach through the gateway, as the standard answers it: the password, then
 * `scaMethods`; the method, then `chosenScaMethod` and `challengeData`; the OTP, then finalised. A
 * wrong OTP is 401 PSU_CREDENTIALS_INVALID and the third one fails the authorisation.
 */
import assert from "node:assert/strict";
import { createConsent, initiatePayment, startBank } from "./bank.ts";
import { assertPublicLinks, call } from "./flow.ts";

const EMBEDDED = { "tpp-redirect-preferred": "false" };

Deno.test("e2e embedded: a payment is authorised with password, method and OTP; each step carries the standard's fields", async () => {
  await using bank = await startBank();
  const created = await initiatePayment(bank, { ...EMBEDDED, "psu-id": "PSU-OK" });
  const id = created.body.paymentId;
  assert.equal(created.headers.get("aspsp-sca-approach"), "EMBEDDED");
  assert.match(created.headers.get("location") ?? "", new RegExp(`/payments/domestic/${id}$`));
  assertPublicLinks(created.body);
  const href = created.body._links.scaStatus.href;
  assert.equal(created.body._links.updatePsuAuthentication.href, href);
  assert.equal(created.body._links.scaRedirect, undefined);

  const authenticated = await call(bank.gateway, "PUT", href, {
    body: { psuData: { password: "sandbox" } },
    headers: { "psu-id": "PSU-OK" },
  });
  assert.equal(authenticated.status, 200, JSON.stringify(authenticated.body));
  assert.equal(authenticated.headers.get("aspsp-sca-approach"), "EMBEDDED");
  assert.equal(authenticated.body.scaStatus, "psuAuthenticated");
  assert.deepEqual(
    authenticated.body.scaMethods.map((m: { authenticationType: string }) => m.authenticationType),
    ["SMS_OTP", "CHIP_OTP", "PUSH_OTP"],
  );
  for (const method of authenticated.body.scaMethods) {
    assert.ok(method.authenticationMethodId && method.name, JSON.stringify(method));
  }
  assert.equal(authenticated.body._links.selectAuthenticationMethod.href, href);
  assertPublicLinks(authenticated.body);

  const selected = await call(bank.gateway, "PUT", href, {
    body: { authenticationMethodId: "sms-otp" },
  });
  assert.equal(selected.status, 200, JSON.stringify(selected.body));
  assert.equal(selected.body.scaStatus, "scaMethodSelected");
  assert.deepEqual(selected.body.chosenScaMethod, authenticated.body.scaMethods[0]);
  assert.equal(selected.body.challengeData.otpMaxLength, 6);
  assert.equal(selected.body.challengeData.otpFormat, "integer");
  assert.match(selected.body.challengeData.additionalInformation, /SMS/);
  assert.equal(selected.body._links.authoriseTransaction.href, href);

  const wrong = await call(bank.gateway, "PUT", href, {
    body: { scaAuthenticationData: "111111" },
  });
  assert.equal(wrong.status, 401);
  assert.equal(wrong.body.tppMessages[0].code, "PSU_CREDENTIALS_INVALID");
  assert.match(wrong.body.tppMessages[0].text, /2 attempts left/);

  const done = await call(bank.gateway, "PUT", href, { body: { scaAuthenticationData: "123456" } });
  assert.equal(done.status, 200);
  assert.equal(done.body.scaStatus, "finalised");
  const status = await call(bank.gateway, "GET", `/v1/payments/domestic/${id}/status`);
  assert.deepEqual(status.body, { transactionStatus: "ACCP" });
});

Deno.test("e2e embedded: a consent authorisation started with the password answers scaMethods at once", async () => {
  await using bank = await startBank();
  const created = await createConsent(bank, {
    ...EMBEDDED,
    "tpp-explicit-authorisation-preferred": "true",
  });
  assert.equal(created.headers.get("aspsp-sca-approach"), "EMBEDDED");
  const start = created.body._links.startAuthorisation.href;
  const started = await call(bank.gateway, "POST", start, {
    body: { psuData: { password: "sandbox" } },
    headers: { "psu-id": "PSU-OK" },
  });
  assert.equal(started.status, 201, JSON.stringify(started.body));
  assert.equal(started.headers.get("aspsp-sca-approach"), "EMBEDDED");
  const href = `${start}/${started.body.authorisationId}`;
  assert.ok((started.headers.get("location") ?? "").endsWith(href.replace(/^\/v1/, "")));
  assert.equal(started.body.scaStatus, "psuAuthenticated");
  assert.equal(started.body.scaMethods.length, 3);

  const selected = await call(bank.gateway, "PUT", href, {
    body: { authenticationMethodId: "push-otp" },
  });
  assert.equal(selected.body.chosenScaMethod.authenticationType, "PUSH_OTP");
  assert.equal(selected.body.challengeData.otpFormat, "integer");
  const done = await call(bank.gateway, "PUT", href, { body: { scaAuthenticationData: "123456" } });
  assert.equal(done.body.scaStatus, "finalised");
  const read = await call(bank.gateway, "GET", `/v1/consents/${created.body.consentId}`);
  assert.equal(read.body.consentStatus, "valid");
  assert.equal(read.body.lastActionDate, new Date().toISOString().slice(0, 10));
});

Deno.test("e2e embedded: three wrong OTPs fail the authorisation; the payment is rejected and the authorisation takes no more updates", async () => {
  await using bank = await startBank();
  const created = await initiatePayment(bank, { ...EMBEDDED, "psu-id": "PSU-OK" });
  const href = created.body._links.scaStatus.href;
  await call(bank.gateway, "PUT", href, { body: { psuData: { password: "sandbox" } } });
  await call(bank.gateway, "PUT", href, { body: { authenticationMethodId: "chip-otp" } });
  for (let i = 0; i < 3; i++) {
    const wrong = await call(bank.gateway, "PUT", href, { body: { scaAuthenticationData: "9" } });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.body.tppMessages[0].code, "PSU_CREDENTIALS_INVALID");
  }
  const sca = await call(bank.gateway, "GET", href);
  assert.equal(sca.body.scaStatus, "failed");
  const status = await call(bank.gateway, "GET", created.body._links.status.href);
  assert.equal(status.body.transactionStatus, "RJCT");
  const late = await call(bank.gateway, "PUT", href, { body: { scaAuthenticationData: "123456" } });
  assert.equal(late.status, 409);
  assert.equal(late.body.tppMessages[0].code, "STATUS_INVALID");
});

Deno.test("e2e embedded: an unknown method is 400 SCA_METHOD_UNKNOWN", async () => {
  await using bank = await startBank();
  const created = await initiatePayment(bank, { ...EMBEDDED, "psu-id": "PSU-OK" });
  const href = created.body._links.scaStatus.href;
  await call(bank.gateway, "PUT", href, { body: { psuData: { password: "sandbox" } } });
  const unknown = await call(bank.gateway, "PUT", href, {
    body: { authenticationMethodId: "PHOTO_OTP" },
  });
  assert.equal(unknown.status, 400);
  assert.equal(unknown.body.tppMessages[0].code, "SCA_METHOD_UNKNOWN");
  assert.equal((await call(bank.gateway, "GET", href)).body.scaStatus, "psuAuthenticated");
});
