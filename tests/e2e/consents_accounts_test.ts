import assert from "node:assert/strict";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { recurringConsent } from "../support/consents.ts";
import { assertPublicLinks, call, PSU_IP } from "./flow.ts";

const MAIN = "GE42SB0000000101904917";
const SAVINGS = "GE15SB0000000101904918";

async function validConsent(gateway: TestGateway, access: Record<string, unknown>) {
  const created = await call(gateway, "POST", "/v1/consents", {
    headers: {
      "psu-ip-address": PSU_IP,
      "psu-id": "PSU-0001",
      "tpp-redirect-preferred": "true",
      "tpp-redirect-uri": "https://tpp.example/consent-ok",
    },
    body: recurringConsent({ access, validUntil: "9999-12-31" }),
  });
  assert.equal(created.status, 201);
  assert.equal(created.body.consentStatus, "received");
  assertPublicLinks(created.body);
  const consentId = created.body.consentId;
  const scaHref = created.body._links.scaStatus.href;
  assert.match(scaHref, new RegExp(`^/v1/consents/${consentId}/authorisations/`));
  const finalised = await call(gateway, "PUT", scaHref, { body: { confirmationCode: "42" } });
  assert.equal(finalised.body.scaStatus, "finalised");
  return consentId as string;
}

Deno.test("e2e: a consent is created, authorised, read and deleted", async () => {
  await using gateway = await startGateway();
  const consentId = await validConsent(gateway, { balances: [{ iban: MAIN }] });
  const status = await call(gateway, "GET", `/v1/consents/${consentId}/status`);
  assert.deepEqual(status.body, { consentStatus: "valid" });
  const read = await call(gateway, "GET", `/v1/consents/${consentId}`);
  assert.equal(read.status, 200);
  assert.equal(read.body.frequencyPerDay, 4);
  assert.notEqual(read.body.validUntil, "9999-12-31", "the bank adjusts the maximum");
  assert.equal(read.body._links.account.href, "/v1/accounts");
  const authorisations = await call(gateway, "GET", `/v1/consents/${consentId}/authorisations`);
  assert.equal(authorisations.body.authorisationIds.length, 1);
  const [authId] = authorisations.body.authorisationIds;
  const sca = await call(gateway, "GET", `/v1/consents/${consentId}/authorisations/${authId}`);
  assert.equal(sca.body.scaStatus, "finalised");
  const deleted = await call(gateway, "DELETE", `/v1/consents/${consentId}`);
  assert.equal(deleted.status, 204);
  const after = await call(gateway, "GET", `/v1/consents/${consentId}/status`);
  assert.equal(after.body.consentStatus, "terminatedByTpp");
});

Deno.test("e2e: a consent authorised explicitly through startConsentAuthorisation", async () => {
  await using gateway = await startGateway();
  const created = await call(gateway, "POST", "/v1/consents", {
    headers: { "psu-ip-address": PSU_IP, "tpp-explicit-authorisation-preferred": "true" },
    body: {
      access: { accounts: [{ iban: MAIN }] },
      recurringIndicator: false,
      validUntil: "2030-01-31",
      frequencyPerDay: 1,
      combinedServiceIndicator: false,
    },
  });
  assert.equal(created.status, 201);
  const start = created.body._links.startAuthorisation.href;
  assert.equal(start, `/v1/consents/${created.body.consentId}/authorisations`);
  const auth = await call(gateway, "POST", start, { body: {}, headers: { "psu-id": "PSU-9" } });
  assert.equal(auth.status, 201);
  const update = await call(gateway, "PUT", `${start}/${auth.body.authorisationId}`, {
    body: { psuData: { password: "sandbox" } },
  });
  assert.equal(update.status, 200);
  assert.equal(update.body.scaStatus, "psuAuthenticated");
});

Deno.test("e2e: account list, details, balances, transactions and transaction details", async () => {
  await using gateway = await startGateway();
  const consentId = await validConsent(gateway, {
    balances: [{ iban: MAIN }, { iban: SAVINGS }],
    transactions: [{ iban: MAIN }],
  });
  const read = { "consent-id": consentId, "psu-ip-address": PSU_IP };
  const list = await call(gateway, "GET", "/v1/accounts?withBalance=true", { headers: read });
  assert.equal(list.status, 200);
  assert.equal(list.headers.get("cache-control"), "no-store");
  assertPublicLinks(list.body);
  const main = list.body.accounts.find((a: { iban: string }) => a.iban === MAIN);
  assert.ok(main, "the main account is listed");
  assert.equal(main._links.balances.href, `/v1/accounts/${main.resourceId}/balances`);

  const details = await call(gateway, "GET", `/v1/accounts/${main.resourceId}`, { headers: read });
  assert.equal(details.body.account.iban, MAIN);
  assert.equal(details.body.account.currency, "GEL");

  const balances = await call(gateway, "GET", main._links.balances.href, { headers: read });
  assert.equal(balances.status, 200);
  assert.deepEqual(
    balances.body.balances.map((b: { balanceType: string }) => b.balanceType).sort(),
    ["closingBooked", "expected"],
  );

  const transactions = await call(
    gateway,
    "GET",
    `${main._links.transactions.href}?bookingStatus=booked&dateFrom=2025-03-01&dateTo=2025-04-30`,
    { headers: read },
  );
  assert.equal(transactions.status, 200);
  assertPublicLinks(transactions.body);
  const booked = transactions.body.transactions.booked;
  assert.ok(booked.length > 0);
  for (const entry of booked) {
    assert.ok(entry.bookingDate >= "2025-03-01" && entry.bookingDate <= "2025-04-30");
  }
  assert.deepEqual(transactions.body.transactions.pending ?? [], []);
  const detailsHref = booked[0]._links.transactionDetails.href;
  assert.equal(
    detailsHref,
    `/v1/accounts/${main.resourceId}/transactions/${booked[0].transactionId}`,
  );
  const detail = await call(gateway, "GET", detailsHref, { headers: read });
  assert.equal(detail.status, 200);
  assert.equal(detail.body.transactionsDetails.transactionId, booked[0].transactionId);
  assert.ok(detail.body.transactionsDetails.mandateId);
});

Deno.test("e2e: the multicurrency account reads with currency XXX", async () => {
  await using gateway = await startGateway();
  const consentId = await validConsent(gateway, { allPsd2: "allAccounts" });
  const list = await call(gateway, "GET", "/v1/accounts", {
    headers: { "consent-id": consentId },
  });
  const multi = list.body.accounts.find((a: { currency: string }) => a.currency === "XXX");
  assert.ok(multi, "one multicurrency account");
  const balances = await call(gateway, "GET", `/v1/accounts/${multi.resourceId}/balances`, {
    headers: { "consent-id": consentId },
  });
  const currencies = new Set(
    balances.body.balances.map((b: { balanceAmount: { currency: string } }) =>
      b.balanceAmount.currency
    ),
  );
  assert.ok(currencies.size > 1);
});

Deno.test("e2e: the core's consent errors come through in Berlin Group form", async () => {
  await using gateway = await startGateway();
  const unknown = await call(gateway, "GET", "/v1/accounts", {
    headers: { "consent-id": "no-such-consent" },
  });
  assert.equal(unknown.status, 403);
  assert.equal(unknown.body.tppMessages[0].code, "CONSENT_UNKNOWN");
});
