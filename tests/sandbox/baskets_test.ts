import assert from "node:assert/strict";
import type { Hono } from "hono";
import { createSandbox } from "../../src/sandbox/mod.ts";
import { assertError, FINALISE, send, sendJson } from "./helpers.ts";

/** A bearer token of `clientId` as the gateway forwards it (the sandbox reads, never verifies). */
function tokenOf(clientId: string): Record<string, string> {
  const part = (value: unknown) =>
    btoa(JSON.stringify(value)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  return { authorization: `Bearer ${part({ alg: "RS256" })}.${part({ client_id: clientId })}.x` };
}

const PAYMENT = {
  debtorAccount: { iban: "GE42SB0000000101904917" },
  instructedAmount: { currency: "GEL", amount: "10.00" },
  creditorAccount: { iban: "GE29NB0000000101904917" },
  creditorName: "Tbilisi Energy",
};

async function pay(app: Hono, tpp: string, headers: Record<string, string> = {}) {
  const made = await sendJson(app, "/psd2/v1/payments/domestic", {
    method: "POST",
    body: PAYMENT,
    headers: { "psu-id": "PSU-BASKET", ...tokenOf(tpp), ...headers },
  });
  assert.equal(made.status, 201);
  return made.body.paymentId as string;
}

function basket(app: Hono, tpp: string, body: unknown) {
  return sendJson(app, "/psd2/v1/signing-baskets", {
    method: "POST",
    body,
    headers: tokenOf(tpp),
  });
}

async function paymentStatus(app: Hono, id: string) {
  return (await sendJson(app, `/psd2/v1/payments/domestic/${id}/status`)).body.transactionStatus;
}

Deno.test("signing basket: one embedded authorisation of PSU-BASKET authorises both payments", async () => {
  const app = createSandbox();
  const ids = [await pay(app, "tpp-a"), await pay(app, "tpp-a")];
  const made = await basket(app, "tpp-a", { paymentIds: ids });
  assert.equal(made.status, 201);
  const href = `/psd2/v1/signing-baskets/${made.body.basketId}`;
  assert.deepEqual(made.body, {
    transactionStatus: "RCVD",
    basketId: made.body.basketId,
    _links: {
      self: { href },
      status: { href: `${href}/status` },
      startAuthorisation: { href: `${href}/authorisations` },
    },
  });
  assert.equal(made.headers.get("location"), href);
  const embedded = { "tpp-redirect-preferred": "false", "psu-id": "PSU-BASKET" };
  const started = await sendJson(app, `${href}/authorisations`, {
    method: "POST",
    body: { psuData: { password: "secret" } },
    headers: { ...tokenOf("tpp-a"), ...embedded },
  });
  assert.equal(started.status, 201);
  assert.equal(started.body.scaStatus, "psuAuthenticated");
  const auth = `${href}/authorisations/${started.body.authorisationId}`;
  const chosen = await sendJson(app, auth, {
    method: "PUT",
    body: { authenticationMethodId: "sms-otp" },
    headers: embedded,
  });
  assert.equal(chosen.body.scaStatus, "scaMethodSelected");
  assert.equal(await paymentStatus(app, ids[0]), "RCVD");
  const done = await sendJson(app, auth, { method: "PUT", body: FINALISE, headers: embedded });
  assert.equal(done.body.scaStatus, "finalised");
  assert.deepEqual(await Promise.all(ids.map((id) => paymentStatus(app, id))), ["ACCP", "ACCP"]);
  assert.deepEqual((await sendJson(app, `${href}/status`)).body, { transactionStatus: "ACTC" });
  const read = await sendJson(app, href);
  assert.deepEqual(read.body.payments, ids);
  assert.equal(read.body.transactionStatus, "ACTC");
  assert.deepEqual((await sendJson(app, `${href}/authorisations`)).body, {
    authorisationIds: [started.body.authorisationId],
  });
  // Authorised: no second authorisation, no deletion.
  await assertError(send(app, href, { method: "DELETE" }), { status: 409, code: "STATUS_INVALID" });
  await assertError(send(app, `${href}/authorisations`, { method: "POST" }), {
    status: 409,
    code: "STATUS_INVALID",
  });
});

Deno.test("signing basket: a failed authorisation rejects every payment in it", async () => {
  const app = createSandbox();
  const ids = [await pay(app, "tpp-a"), await pay(app, "tpp-a")];
  const href = `/psd2/v1/signing-baskets/${
    (await basket(app, "tpp-a", { paymentIds: ids })).body
      .basketId
  }`;
  const headers = { "tpp-redirect-preferred": "false", "psu-id": "PSU-SCA-FAIL" };
  const started = await sendJson(app, `${href}/authorisations`, {
    method: "POST",
    body: { authenticationMethodId: "sms-otp" },
    headers,
  });
  const auth = `${href}/authorisations/${started.body.authorisationId}`;
  for (let i = 0; i < 3; i++) {
    await assertError(send(app, auth, { method: "PUT", body: FINALISE, headers }), {
      status: 401,
      code: "PSU_CREDENTIALS_INVALID",
    });
  }
  assert.deepEqual(await Promise.all(ids.map((id) => paymentStatus(app, id))), ["RJCT", "RJCT"]);
  assert.equal((await sendJson(app, `${href}/status`)).body.transactionStatus, "RJCT");
});

Deno.test("signing basket: refuses another TPP's, unknown, authorised and basketed payments", async () => {
  const app = createSandbox();
  const mine = await pay(app, "tpp-b");
  const theirs = await pay(app, "tpp-a");
  const foreign = await basket(app, "tpp-b", { paymentIds: [mine, theirs] });
  assert.equal(foreign.status, 400);
  assert.deepEqual(foreign.body.tppMessages[0], {
    category: "ERROR",
    code: "RESOURCE_UNKNOWN",
    path: "paymentIds[1]",
    text: `Payment "${theirs}" is unknown`,
  });
  const unknown = await basket(app, "tpp-b", { paymentIds: ["nope"] });
  assert.equal(unknown.body.tppMessages[0].code, "RESOURCE_UNKNOWN");
  assert.equal((await basket(app, "tpp-b", {})).status, 400);
  assert.equal((await basket(app, "tpp-b", { paymentIds: [mine] })).status, 201);
  const twice = await basket(app, "tpp-b", { paymentIds: [mine] });
  assert.equal(twice.status, 409);
  assert.match(twice.body.tppMessages[0].text, /is in signing basket ".+" already/);
  const cancelled = await pay(app, "tpp-b");
  await send(app, `/psd2/v1/payments/domestic/${cancelled}`, { method: "DELETE" });
  const notWaiting = await basket(app, "tpp-b", { paymentIds: [cancelled] });
  assert.equal(notWaiting.status, 409);
  assert.equal(notWaiting.body.tppMessages[0].path, "paymentIds[0]");
});

Deno.test("signing basket: deleted while unauthorised, then unknown; its payments free again", async () => {
  const app = createSandbox();
  const id = await pay(app, "tpp-a");
  const href = `/psd2/v1/signing-baskets/${
    (await basket(app, "tpp-a", { paymentIds: [id] })).body
      .basketId
  }`;
  assert.equal((await send(app, href, { method: "DELETE" })).status, 204);
  await assertError(send(app, `${href}/status`), { status: 404, code: "RESOURCE_UNKNOWN" });
  assert.equal((await basket(app, "tpp-a", { paymentIds: [id] })).status, 201);
});

Deno.test("signing basket: consents in a basket become valid with it", async () => {
  const app = createSandbox();
  const consent = await sendJson(app, "/psd2/v1/consents", {
    method: "POST",
    body: {
      access: { balances: [{ iban: "GE42SB0000000101904917" }] },
      recurringIndicator: true,
      validUntil: "9999-12-31",
      frequencyPerDay: 4,
      combinedServiceIndicator: false,
    },
    headers: tokenOf("tpp-a"),
  });
  const consentId = consent.body.consentId as string;
  const made = await basket(app, "tpp-a", {
    paymentIds: [await pay(app, "tpp-a")],
    consentIds: [consentId],
  });
  const href = `/psd2/v1/signing-baskets/${made.body.basketId}`;
  const started = await sendJson(app, `${href}/authorisations`, {
    method: "POST",
    body: FINALISE,
    headers: { "tpp-redirect-preferred": "false", "psu-id": "PSU-BASKET" },
  });
  assert.equal(started.body.scaStatus, "finalised");
  const status = await sendJson(app, `/psd2/v1/consents/${consentId}/status`);
  assert.equal(status.body.consentStatus, "valid");
  assert.deepEqual((await sendJson(app, href)).body.consents, [consentId]);
});
