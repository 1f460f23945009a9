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

Deno.test("mountAuthorisations() PUT moves the SCA status by body: {} then psuData, method, code", async () => {
  const app = createSandbox();
  const start = await explicitPayment(app);
  const created = await sendJson(app, start, {
    method: "POST",
    headers: { "TPP-Decoupled-Preferred": "true" },
  });
  assert.equal(created.status, 201);
  assert.deepEqual(Object.keys(created.body).sort(), [
    "_links",
    "authorisationId",
    "psuMessage",
    "scaStatus",
  ]);
  const href = created.body._links.scaStatus.href;
  assert.equal(href, `${start}/${created.body.authorisationId}`);
  assert.equal(created.body._links.scaRedirect, undefined);
  const steps: [Record<string, unknown>, string][] = [
    [{}, "psuIdentified"],
    [{ psuData: { password: "secret" } }, "psuAuthenticated"],
    [{ authenticationMethodId: "sms-otp" }, "scaMethodSelected"],
    [{ confirmationCode: "abc" }, "finalised"],
  ];
  for (const [body, expected] of steps) {
    const put = await sendJson(app, href, { method: "PUT", body });
    assert.equal(put.status, 200);
    assert.deepEqual(Object.keys(put.body).sort(), ["_links", "psuMessage", "scaStatus"]);
    assert.equal(put.body.scaStatus, expected);
    assert.deepEqual(put.body._links, { scaStatus: { href } });
    const read = await sendJson(app, href);
    assert.equal(read.body.scaStatus, expected);
  }
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
  assert.match(read.body._links.scaRedirect.href, /^https:\/\/sandbox-bank\.example\//);
});

Deno.test("mountAuthorisations() POST with a transaction authorisation body finalises at once", async () => {
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
