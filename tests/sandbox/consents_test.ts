import assert from "node:assert/strict";
import {
  assertError,
  FINALISE,
  sandboxWithClock,
  send,
  sendJson,
  validConsent,
} from "./helpers.ts";

const MAIN = "GE42SB0000000101904917";
const MAIN_ID = "5b1f3c2e-7a41-4d6b-9c0e-000000000001";
const IP = { "PSU-IP-Address": "192.0.2.1" };
const BODY = {
  access: { balances: [{ iban: MAIN }], transactions: [{ iban: MAIN }] },
  recurringIndicator: true,
  validUntil: "2025-12-01",
  frequencyPerDay: 4,
  combinedServiceIndicator: false,
};

Deno.test("POST consent is received, links the implicit authorisation, and becomes valid once authorised", async () => {
  const { app } = sandboxWithClock();
  const created = await sendJson(app, "/psd2/v1/consents", {
    method: "POST",
    headers: { ...IP, "PSU-ID": "psu-1" },
    body: BODY,
  });
  assert.equal(created.status, 201);
  assert.equal(created.headers.get("Server"), "legacy-core/7.2");
  const { consentId, _links } = created.body;
  const href = `/psd2/v1/consents/${consentId}`;
  assert.equal(created.headers.get("Location"), href);
  assert.equal(created.headers.get("ASPSP-SCA-Approach"), "REDIRECT");
  assert.equal(created.body.consentStatus, "received");
  assert.equal(_links.self.href, href);
  assert.equal(_links.status.href, `${href}/status`);
  assert.match(_links.scaStatus.href, new RegExp(`^${href}/authorisations/[0-9a-f-]{36}$`));
  assert.match(_links.scaRedirect.href, /^https:\/\/sandbox-bank\.example\/sca\//);
  assert.equal(_links.startAuthorisation, undefined);

  await assertError(
    send(app, `/psd2/v1/accounts/${MAIN_ID}`, { headers: { "Consent-ID": consentId } }),
    {
      status: 401,
      code: "CONSENT_INVALID",
    },
  );
  const put = await sendJson(app, _links.scaStatus.href, { method: "PUT", body: FINALISE });
  assert.equal(put.body.scaStatus, "finalised");
  assert.deepEqual((await sendJson(app, `${href}/status`)).body, { consentStatus: "valid" });
  const read = await sendJson(app, href);
  assert.deepEqual(read.body, {
    access: BODY.access,
    recurringIndicator: true,
    validUntil: "2025-12-01",
    frequencyPerDay: 4,
    lastActionDate: "2025-07-01",
    consentStatus: "valid",
    _links: { account: { href: "/psd2/v1/accounts" } },
  });
  const account = await sendJson(app, `/psd2/v1/accounts/${MAIN_ID}`, {
    headers: { "Consent-ID": consentId },
  });
  assert.equal(account.status, 200);
  assert.equal(account.body.account.iban, MAIN);
});

Deno.test("POST consent with TPP-Explicit-Authorisation-Preferred or PSU-Corporate-ID links startAuthorisation only", async () => {
  const { app } = sandboxWithClock();
  for (const header of ["TPP-Explicit-Authorisation-Preferred", "PSU-Corporate-ID"]) {
    const created = await sendJson(app, "/psd2/v1/consents", {
      method: "POST",
      headers: { ...IP, [header]: "true" },
      body: BODY,
    });
    const href = `/psd2/v1/consents/${created.body.consentId}`;
    assert.deepEqual(created.body._links, {
      self: { href },
      status: { href: `${href}/status` },
      startAuthorisation: { href: `${href}/authorisations` },
    });
    const auth = await sendJson(app, `${href}/authorisations`, { method: "POST" });
    assert.equal(auth.status, 201);
    await send(app, auth.body._links.scaStatus.href, { method: "PUT", body: FINALISE });
    assert.equal((await sendJson(app, `${href}/status`)).body.consentStatus, "valid");
    await assertError(send(app, `${href}/authorisations`, { method: "POST" }), {
      status: 409,
      code: "STATUS_INVALID",
    });
  }
});

Deno.test("POST consent shortens 9999-12-31 and dates beyond now + 180 days to now + 180 days", async () => {
  const { app } = sandboxWithClock("2025-07-01T10:00:00Z");
  const cases = [
    ["9999-12-31", "2025-12-28"],
    ["2026-06-01", "2025-12-28"],
    ["2025-12-28", "2025-12-28"],
    ["2025-09-30", "2025-09-30"],
  ];
  for (const [requested, stored] of cases) {
    const created = await sendJson(app, "/psd2/v1/consents", {
      method: "POST",
      headers: IP,
      body: { ...BODY, validUntil: requested },
    });
    const read = await sendJson(app, created.body._links.self.href);
    assert.equal(read.body.validUntil, stored, requested);
  }
});

Deno.test("DELETE consent answers 204 and terminates it; account reads then fail with CONSENT_EXPIRED", async () => {
  const { app } = sandboxWithClock();
  const id = await validConsent(app, { access: BODY.access });
  const res = await send(app, `/psd2/v1/consents/${id}`, { method: "DELETE" });
  assert.equal(res.status, 204);
  assert.equal(await res.text(), "");
  assert.equal(
    (await sendJson(app, `/psd2/v1/consents/${id}/status`)).body.consentStatus,
    "terminatedByTpp",
  );
  await assertError(send(app, "/psd2/v1/accounts", { headers: { "Consent-ID": id } }), {
    status: 401,
    code: "CONSENT_EXPIRED",
  });
});

Deno.test("A new recurring consent, once valid, expires the same PSU's earlier recurring consent", async () => {
  const { app } = sandboxWithClock();
  const access = { accounts: [{ iban: MAIN }] };
  const earlier = await validConsent(app, { access, psuId: "psu-7" });
  const otherPsu = await validConsent(app, { access, psuId: "psu-8" });
  const oneOff = await validConsent(app, { access, psuId: "psu-7", recurring: false });
  const created = await sendJson(app, "/psd2/v1/consents", {
    method: "POST",
    headers: { ...IP, "PSU-ID": "psu-7" },
    body: { ...BODY, access },
  });
  const status = (id: string) => sendJson(app, `/psd2/v1/consents/${id}/status`);
  assert.equal((await status(earlier)).body.consentStatus, "valid", "received is not enough");
  await send(app, created.body._links.scaStatus.href, { method: "PUT", body: FINALISE });
  assert.equal((await status(created.body.consentId)).body.consentStatus, "valid");
  assert.equal((await status(earlier)).body.consentStatus, "expired");
  assert.equal((await status(otherPsu)).body.consentStatus, "valid");
  assert.equal((await status(oneOff)).body.consentStatus, "valid");
  await assertError(send(app, "/psd2/v1/accounts", { headers: { "Consent-ID": earlier } }), {
    status: 401,
    code: "CONSENT_EXPIRED",
  });
});

Deno.test("A consent reads as expired once its validUntil day (inclusive) has passed", async () => {
  const { app, clock } = sandboxWithClock("2025-07-01T10:00:00Z");
  const id = await validConsent(app, { access: BODY.access, validUntil: "2025-07-10" });
  const read = () => sendJson(app, "/psd2/v1/accounts", { headers: { "Consent-ID": id } });
  clock.advanceDays(9); // 2025-07-10, the last valid day
  assert.equal((await read()).status, 200);
  clock.advanceDays(1); // 2025-07-11
  assert.equal((await sendJson(app, `/psd2/v1/consents/${id}`)).body.consentStatus, "expired");
  await assertError(send(app, "/psd2/v1/accounts", { headers: { "Consent-ID": id } }), {
    status: 401,
    code: "CONSENT_EXPIRED",
  });
});

Deno.test("Consent routes answer 404 for unknown ids and 400 for a missing or malformed validUntil", async () => {
  const { app } = sandboxWithClock();
  const unknown = `/psd2/v1/consents/${crypto.randomUUID()}`;
  for (const path of [unknown, `${unknown}/status`, `${unknown}/authorisations`]) {
    await assertError(send(app, path), { status: 404, code: "RESOURCE_UNKNOWN" });
  }
  await assertError(send(app, unknown, { method: "DELETE" }), {
    status: 404,
    code: "RESOURCE_UNKNOWN",
  });
  for (const validUntil of [undefined, "2025-02-30", "tomorrow"]) {
    await assertError(
      send(app, "/psd2/v1/consents", {
        method: "POST",
        headers: IP,
        body: { ...BODY, validUntil },
      }),
      { status: 400, code: "FORMAT_ERROR" },
    );
  }
});
