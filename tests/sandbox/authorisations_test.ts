import assert from "node:assert/strict";
import { createSandbox } from "../../src/sandbox/mod.ts";
import { assertError, send, sendJson } from "./helpers.ts";

async function explicitPayment(app: ReturnType<typeof createSandbox>) {
  const res = await sendJson(app, "/psd2/v1/payments/aspsp", {
    method: "POST",
    headers: { "PSU-IP-Address": "192.0.2.1", "TPP-Explicit-Authorisation-Preferred": "true" },
    body: { instructedAmount: { currency: "GEL", amount: "1.00" } },
  });
  return res.body._links.startAuthorisation.href as string;
}

Deno.test("mountAuthorisations() embedded: scaMethods after psuData, chosenScaMethod and challengeData after the method, finalised by the OTP", async () => {
  const app = createSandbox();
  const start = await explicitPayment(app);
  const created = await sendJson(app, start, {
    method: "POST",
    headers: { "TPP-Redirect-Preferred": "false", "PSU-ID": "PSU-OK" },
  });
  assert.equal(created.status, 201);
  assert.equal(created.headers.get("ASPSP-SCA-Approach"), "EMBEDDED");
  const href = `${start}/${created.body.authorisationId}`;
  assert.equal(created.headers.get("Location"), href);
  assert.equal(created.body.scaStatus, "psuIdentified");
  assert.deepEqual(created.body._links, {
    scaStatus: { href },
    updatePsuAuthentication: { href },
  });

  const authenticated = await sendJson(app, href, {
    method: "PUT",
    body: { psuData: { password: "secret" } },
  });
  assert.equal(authenticated.status, 200);
  assert.equal(authenticated.headers.get("ASPSP-SCA-Approach"), "EMBEDDED");
  assert.equal(authenticated.body.scaStatus, "psuAuthenticated");
  assert.deepEqual(
    authenticated.body.scaMethods.map((m: Record<string, string>) => [
      m.authenticationType,
      m.authenticationMethodId,
    ]),
    [["SMS_OTP", "sms-otp"], ["CHIP_OTP", "chip-otp"], ["PUSH_OTP", "push-otp"]],
  );
  for (const method of authenticated.body.scaMethods) assert.equal(typeof method.name, "string");
  assert.deepEqual(authenticated.body._links, {
    scaStatus: { href },
    selectAuthenticationMethod: { href },
  });

  const selected = await sendJson(app, href, {
    method: "PUT",
    body: { authenticationMethodId: "chip-otp" },
  });
  assert.equal(selected.body.scaStatus, "scaMethodSelected");
  assert.equal(selected.body.scaMethods, undefined);
  assert.equal(selected.body.chosenScaMethod.authenticationType, "CHIP_OTP");
  assert.equal(selected.body.challengeData.otpMaxLength, 6);
  assert.equal(selected.body.challengeData.otpFormat, "integer");
  assert.deepEqual(selected.body.challengeData.data, ["37465920"]);
  assert.match(selected.body.challengeData.additionalInformation, /123456/);
  assert.deepEqual(selected.body._links, { scaStatus: { href }, authoriseTransaction: { href } });

  await assertError(
    send(app, href, { method: "PUT", body: { scaAuthenticationData: "654321" } }),
    { status: 401, code: "PSU_CREDENTIALS_INVALID" },
  );
  const done = await sendJson(app, href, {
    method: "PUT",
    body: { scaAuthenticationData: "123456" },
  });
  assert.equal(done.body.scaStatus, "finalised");
  assert.deepEqual(done.body._links, { scaStatus: { href } });
  const status = await sendJson(app, start.replace(/\/authorisations$/, "/status"));
  assert.equal(status.body.transactionStatus, "ACCP");
});

Deno.test("mountAuthorisations() three wrong OTPs fail the authorisation and reject the payment", async () => {
  const app = createSandbox();
  const start = await explicitPayment(app);
  const created = await sendJson(app, start, {
    method: "POST",
    headers: { "TPP-Redirect-Preferred": "false", "PSU-ID": "PSU-OK" },
    body: { psuData: { password: "secret" } },
  });
  assert.equal(created.body.scaStatus, "psuAuthenticated", "POST may carry the password");
  assert.equal(created.body.scaMethods.length, 3);
  const href = created.body._links.scaStatus.href;
  await send(app, href, { method: "PUT", body: { authenticationMethodId: "sms-otp" } });
  const texts: string[] = [];
  for (let i = 0; i < 3; i++) {
    const wrong = await sendJson(app, href, {
      method: "PUT",
      body: { scaAuthenticationData: "1" },
    });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.body.tppMessages[0].code, "PSU_CREDENTIALS_INVALID");
    texts.push(wrong.body.tppMessages[0].text);
  }
  assert.match(texts[0], /2 attempts left/);
  assert.match(texts[2], /has failed/);
  assert.equal((await sendJson(app, href)).body.scaStatus, "failed");
  const status = await sendJson(app, start.replace(/\/authorisations$/, "/status"));
  assert.equal(status.body.transactionStatus, "RJCT");
  await assertError(
    send(app, href, { method: "PUT", body: { scaAuthenticationData: "123456" } }),
    { status: 409, code: "STATUS_INVALID" },
  );
});

Deno.test("mountAuthorisations() an unknown method is 400 SCA_METHOD_UNKNOWN; a password without PSU-ID is 400 FORMAT_ERROR", async () => {
  const app = createSandbox();
  const start = await explicitPayment(app);
  const created = await sendJson(app, start, {
    method: "POST",
    headers: { "TPP-Redirect-Preferred": "false" },
  });
  const href = created.body._links.scaStatus.href;
  await assertError(
    send(app, href, { method: "PUT", body: { psuData: { password: "secret" } } }),
    { status: 400, code: "FORMAT_ERROR" },
  );
  await assertError(
    send(app, href, { method: "PUT", body: { authenticationMethodId: "SMS" } }),
    { status: 400, code: "SCA_METHOD_UNKNOWN" },
  );
  assert.equal((await sendJson(app, href)).body.scaStatus, "received");
});

Deno.test("mountAuthorisations() decoupled: the PSU's app answers once the delay has passed on the sandbox clock", async () => {
  let now = new Date("2025-07-01T10:00:00Z");
  const app = createSandbox({ now: () => now, decoupledDelayMs: 2000 });
  const start = await explicitPayment(app);
  const created = await sendJson(app, start, {
    method: "POST",
    headers: { "TPP-Decoupled-Preferred": "true", "PSU-ID": "PSU-OK" },
  });
  assert.equal(created.headers.get("ASPSP-SCA-Approach"), "DECOUPLED");
  assert.equal(created.body.scaStatus, "psuIdentified");
  assert.match(created.body.psuMessage, /app/);
  const href = created.body._links.scaStatus.href;
  now = new Date(now.getTime() + 1999);
  assert.equal((await sendJson(app, href)).body.scaStatus, "psuIdentified");
  now = new Date(now.getTime() + 1);
  assert.equal((await sendJson(app, href)).body.scaStatus, "finalised");
  const status = await sendJson(app, start.replace(/\/authorisations$/, "/status"));
  assert.equal(status.body.transactionStatus, "ACCP");
});

Deno.test("mountAuthorisations() PUT {} in the decoupled approach asks to confirm in the app", async () => {
  const app = createSandbox();
  const start = await explicitPayment(app);
  const created = await sendJson(app, start, {
    method: "POST",
    headers: { "TPP-Decoupled-Preferred": "true" },
  });
  assert.ok(created.body._links.updatePsuIdentification);
  const put = await sendJson(app, created.body._links.scaStatus.href, { method: "PUT", body: {} });
  assert.equal(put.body.scaStatus, "psuIdentified");
  assert.match(put.body.psuMessage, /app/);
});

Deno.test("mountAuthorisations() PUT on a finalised authorisation answers 409 STATUS_INVALID", async () => {
  const app = createSandbox();
  const start = await explicitPayment(app);
  const created = await sendJson(app, start, { method: "POST" });
  const href = created.body._links.scaStatus.href;
  await send(app, href, { method: "PUT", body: { scaAuthenticationData: "1" } });
  await assertError(send(app, href, { method: "PUT", body: {} }), {
    status: 409,
    code: "STATUS_INVALID",
  });
});

Deno.test("mountAuthorisations() GET one returns the SCA status response with trustedBeneficiaryFlag", async () => {
  const app = createSandbox();
  const start = await explicitPayment(app);
  const created = await sendJson(app, start, { method: "POST", headers: { "PSU-ID": "psu-9" } });
  assert.equal(created.body.scaStatus, "psuIdentified");
  const read = await sendJson(app, created.body._links.scaStatus.href);
  assert.equal(read.status, 200);
  assert.equal(read.body.scaStatus, "psuIdentified");
  assert.equal(read.body.trustedBeneficiaryFlag, false);
  assert.equal(typeof read.body.psuMessage, "string");
  assert.equal(read.body._links.scaStatus.href, created.body._links.scaStatus.href);
  assert.match(read.body._links.scaRedirect.href, /^https:\/\/sandbox-bank\.example\/sca\//);
});

Deno.test("mountAuthorisations() POST with a transaction authorisation body finalises at once (no challenge was sent)", async () => {
  const app = createSandbox();
  const start = await explicitPayment(app);
  const created = await sendJson(app, start, {
    method: "POST",
    body: { scaAuthenticationData: "123" },
  });
  assert.equal(created.body.scaStatus, "finalised");
  const status = await sendJson(app, start.replace(/\/authorisations$/, "/status"));
  assert.equal(status.body.transactionStatus, "ACCP");
});

Deno.test("mountAuthorisations() rejects malformed JSON with 400 FORMAT_ERROR and accepts null", async () => {
  const app = createSandbox();
  const start = await explicitPayment(app);
  await assertError(
    send(app, start, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{",
    }),
    { status: 400, code: "FORMAT_ERROR" },
  );
  const created = await sendJson(app, start, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "null",
  });
  assert.equal(created.status, 201);
  assert.equal(created.body.scaStatus, "received");
});
