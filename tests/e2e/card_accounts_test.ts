/**
 * Card accounts end to end, through the real gateway in front of the sandbox bank: a consent of
 * the test user PSU-CARD naming a card, authorised; the card list, details, balances and the
 * transaction report in pages; a card outside the consent refused at the edge; frequencyPerDay
 * used up (the pages of one report one access); the group switched off.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import { DEFAULT_POLICY, startGateway, type TestGateway } from "../support/gateway.ts";
import type { PolicyInput } from "../support/policies.ts";
import { recurringConsent } from "../support/consents.ts";
import { CARD_TRANSACTIONS, CARDS } from "../../src/sandbox/card_data.ts";
import { assertPublicLinks, call, PSU_IP } from "./flow.ts";

const [GOLD, TRAVEL] = CARDS;

/** The default policy with consent scope enforced (unknown card ids refused) and `groups` over it. */
function policy(groups: Record<string, unknown> = {}): PolicyInput {
  const base = parse(DEFAULT_POLICY) as PolicyInput;
  return {
    ...base,
    defaults: {
      ...base.defaults,
      consent_scope: { mode: "enforce", unknown_account: "refuse" },
    },
    groups: { ...base.groups, ...groups },
  };
}

/** A consent of PSU-CARD over `access` (recurring, `frequencyPerDay`), authorised; its id. */
async function cardConsent(
  gateway: TestGateway,
  access: Record<string, unknown>,
  frequencyPerDay = 4,
): Promise<string> {
  const created = await call(gateway, "POST", "/v1/consents", {
    headers: { "psu-ip-address": PSU_IP, "psu-id": "PSU-CARD" },
    body: recurringConsent({ access, frequencyPerDay }),
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const done = await call(gateway, "PUT", created.body._links.scaStatus.href, {
    body: { confirmationCode: "123456" },
  });
  assert.equal(done.body.scaStatus, "finalised");
  return created.body.consentId;
}

const GOLD_ONLY = {
  balances: [{ maskedPan: GOLD.maskedPan }],
  transactions: [{ maskedPan: GOLD.maskedPan }],
};

Deno.test("e2e: a card consent reads the card list, details, balances and the report in pages", async () => {
  await using gateway = await startGateway({ policy: policy() });
  const consentId = await cardConsent(gateway, GOLD_ONLY);
  const consent = await call(gateway, "GET", `/v1/consents/${consentId}`);
  assert.equal(consent.body._links.cardAccount.href, "/v1/card-accounts");
  const headers = { "consent-id": consentId, "psu-ip-address": PSU_IP };
  const read = (path: string) => call(gateway, "GET", path, { headers });

  const list = await read("/v1/card-accounts");
  assert.equal(list.status, 200, JSON.stringify(list.body));
  assert.equal(list.headers.get("cache-control"), "no-store");
  assertPublicLinks(list.body);
  assert.deepEqual(list.body.cardAccounts.map((c: { maskedPan: string }) => c.maskedPan), [
    GOLD.maskedPan,
  ]);
  const [card] = list.body.cardAccounts;
  const href = `/v1/card-accounts/${card.resourceId}`;
  assert.equal(card._links.transactions.href, `${href}/transactions`);

  const details = await read(href);
  assert.equal(details.status, 200);
  assert.equal(details.body.cardAccount.maskedPan, GOLD.maskedPan);
  assert.deepEqual(details.body.cardAccount.creditLimit, GOLD.creditLimit);
  assertPublicLinks(details.body);

  const balances = await read(card._links.balances.href);
  assert.equal(balances.status, 200);
  assert.deepEqual(
    balances.body.balances.map((b: { balanceType: string }) => b.balanceType),
    ["interimBooked", "nonInvoiced"],
  );

  // The report in pages of 5, following the public next links.
  const booked: string[] = [];
  let pending: unknown[] | undefined;
  let path: string | undefined =
    `${href}/transactions?bookingStatus=both&dateFrom=2025-01-01&itemsPerPage=5`;
  while (path) {
    const page = await read(path);
    assert.equal(page.status, 200, JSON.stringify(page.body));
    assertPublicLinks(page.body);
    const report = page.body.cardTransactions;
    assert.equal(report._links.cardAccount.href, href);
    booked.push(...report.booked.map((t: { cardTransactionId: string }) => t.cardTransactionId));
    pending ??= report.pending;
    path = report._links.next?.href;
  }
  const seed = CARD_TRANSACTIONS.get(GOLD.resourceId)!;
  assert.deepEqual(booked, seed.booked.map((t) => t.cardTransactionId), "every page, in order");
  assert.equal(pending?.length, 2, "the pending entries come with the first page");
});

Deno.test("e2e: a card outside the consent is refused at the edge", async () => {
  await using gateway = await startGateway({ policy: policy() });
  const consentId = await cardConsent(gateway, GOLD_ONLY);
  const headers = { "consent-id": consentId, "psu-ip-address": PSU_IP };
  const outside = `/v1/card-accounts/${TRAVEL.resourceId}/balances`;
  const before = await call(gateway, "GET", outside, { headers });
  assert.equal(before.status, 401);
  assert.equal(before.body.tppMessages[0].code, "CONSENT_INVALID");
  assert.match(
    before.body.tppMessages[0].text,
    /read the card account list \(GET \/v1\/card-accounts\)/,
  );
  assert.equal((await call(gateway, "GET", "/v1/card-accounts", { headers })).status, 200);
  const after = await call(gateway, "GET", outside, { headers });
  assert.equal(after.status, 401);
  assert.equal(after.body.tppMessages[0].code, "CONSENT_INVALID");
  // Another PSU's consent reaching every account holds no card at the bank.
  const other = await call(gateway, "POST", "/v1/consents", {
    headers: { "psu-ip-address": PSU_IP, "psu-id": "PSU-OK" },
    body: recurringConsent({ access: { allPsd2: "allAccounts" } }),
  });
  await call(gateway, "PUT", other.body._links.scaStatus.href, {
    body: { confirmationCode: "123456" },
  });
  const none = await call(gateway, "GET", "/v1/card-accounts", {
    headers: { "consent-id": other.body.consentId },
  });
  assert.deepEqual(none.body, { cardAccounts: [] });
});

Deno.test("e2e: card reads use up frequencyPerDay (429); the pages of one report are one access", async () => {
  await using gateway = await startGateway({ policy: policy() });
  const consentId = await cardConsent(gateway, GOLD_ONLY, 1);
  // TPP-initiated: no PSU-IP-Address.
  const headers = { "consent-id": consentId };
  const read = (path: string) => call(gateway, "GET", path, { headers });
  const href = `/v1/card-accounts/${GOLD.resourceId}`;
  // The card list places the card for consent_scope.
  assert.equal((await read("/v1/card-accounts")).status, 200);
  assert.equal((await read(`${href}/balances`)).status, 200);
  const over = await read(`${href}/balances`);
  assert.equal(over.status, 429);
  assert.equal(over.body.tppMessages[0].code, "ACCESS_EXCEEDED");
  assert.ok(Number(over.headers.get("retry-after")) > 0);
  const first = `${href}/transactions?bookingStatus=booked&dateFrom=2025-01-01&itemsPerPage=5`;
  const statuses: number[] = [];
  let path: string | undefined = first;
  while (path) {
    const page = await read(path);
    statuses.push(page.status);
    path = page.status === 200 ? page.body.cardTransactions._links.next?.href : undefined;
  }
  assert.deepEqual(statuses, [200, 200, 200], "three pages, one access");
  const other = await read(`${href}/transactions?bookingStatus=pending&dateFrom=2025-01-01`);
  assert.equal(other.status, 429, "another report is a new access");
});

Deno.test("e2e: with groups.cards.service.offered false the card operations answer 405 SERVICE_INVALID", async () => {
  await using gateway = await startGateway({
    policy: policy({ cards: { service: { offered: false } } }),
  });
  const consentId = await cardConsent(gateway, { allPsd2: "allAccounts" });
  const headers = { "consent-id": consentId, "psu-ip-address": PSU_IP };
  for (
    const path of [
      "/v1/card-accounts",
      `/v1/card-accounts/${GOLD.resourceId}`,
      `/v1/card-accounts/${GOLD.resourceId}/balances`,
      `/v1/card-accounts/${GOLD.resourceId}/transactions?bookingStatus=booked&dateFrom=2025-01-01`,
    ]
  ) {
    const refused = await call(gateway, "GET", path, { headers });
    assert.equal(refused.status, 405, path);
    assert.equal(refused.body.tppMessages[0].code, "SERVICE_INVALID");
  }
  assert.equal((await call(gateway, "GET", "/v1/accounts", { headers })).status, 200);
});
