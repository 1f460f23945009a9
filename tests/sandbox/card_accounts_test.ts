import assert from "node:assert/strict";
import { CARD_TRANSACTIONS, CARDS } from "../../src/sandbox/card_data.ts";
import { sandboxWithClock, sendJson, validConsent } from "./helpers.ts";

const [GOLD, TRAVEL] = CARDS;
const READ = "/psd2/v1/card-accounts";

/** Asserts a Berlin Group error answer of `status` and `code`. */
// deno-lint-ignore no-explicit-any
function assertRefused(answer: { status: number; body: any }, status: number, code: string) {
  assert.equal(answer.status, status);
  assert.equal(answer.body.tppMessages[0].code, code);
}

async function read(app: Parameters<typeof sendJson>[0], consentId: string, path: string) {
  return await sendJson(app, path, { headers: { "Consent-ID": consentId } });
}

Deno.test("GET card-accounts lists PSU-CARD's cards the consent names, with links by grant", async () => {
  const { app } = sandboxWithClock();
  const consentId = await validConsent(app, {
    psuId: "PSU-CARD",
    access: {
      accounts: [{ maskedPan: TRAVEL.maskedPan }],
      transactions: [{ maskedPan: GOLD.maskedPan }],
    },
  });
  const res = await read(app, consentId, READ);
  assert.equal(res.status, 200);
  assert.deepEqual(res.body.cardAccounts.map((c: { maskedPan: string }) => c.maskedPan), [
    GOLD.maskedPan,
    TRAVEL.maskedPan,
  ]);
  const [gold, travel] = res.body.cardAccounts;
  assert.deepEqual(gold._links, {
    transactions: { href: `${READ}/${GOLD.resourceId}/transactions` },
  });
  assert.deepEqual(travel._links, {});
  assert.equal(gold.balances, undefined);
  assert.deepEqual(gold.creditLimit, GOLD.creditLimit);
});

Deno.test("GET card-accounts: no other PSU holds a card", async () => {
  const { app } = sandboxWithClock();
  const consentId = await validConsent(app, {
    psuId: "PSU-OK",
    access: { allPsd2: "allAccounts" },
  });
  const res = await read(app, consentId, READ);
  assert.deepEqual(res.body, { cardAccounts: [] });
  assertRefused(await read(app, consentId, `${READ}/${GOLD.resourceId}`), 404, "RESOURCE_UNKNOWN");
});

Deno.test("GET card-accounts details, balances and reads outside the consent", async () => {
  const { app } = sandboxWithClock();
  const consentId = await validConsent(app, {
    psuId: "PSU-CARD",
    access: { balances: [{ maskedPan: GOLD.maskedPan }] },
  });
  const details = await read(app, consentId, `${READ}/${GOLD.resourceId}`);
  assert.equal(details.body.cardAccount.maskedPan, GOLD.maskedPan);
  assert.equal(details.body.cardAccount.balances.length, 2);
  const balances = await read(app, consentId, `${READ}/${GOLD.resourceId}/balances`);
  assert.deepEqual(balances.body.cardAccount, { maskedPan: GOLD.maskedPan });
  assert.deepEqual(balances.body.balances.map((b: { balanceType: string }) => b.balanceType), [
    "interimBooked",
    "nonInvoiced",
  ]);
  assertRefused(
    await read(app, consentId, `${READ}/${GOLD.resourceId}/transactions?bookingStatus=booked`),
    401,
    "CONSENT_INVALID",
  );
  assertRefused(await read(app, consentId, `${READ}/${TRAVEL.resourceId}`), 401, "CONSENT_INVALID");
});

Deno.test("GET card-accounts transactions: booked, pending, both, dates and pages", async () => {
  const { app } = sandboxWithClock();
  const consentId = await validConsent(app, {
    psuId: "PSU-CARD",
    access: { transactions: [{ maskedPan: GOLD.maskedPan }] },
  });
  const report = `${READ}/${GOLD.resourceId}/transactions`;
  const seed = CARD_TRANSACTIONS.get(GOLD.resourceId)!;
  const both = await read(app, consentId, `${report}?bookingStatus=both&dateFrom=2025-01-01`);
  assert.equal(both.status, 200);
  assert.equal(both.body.cardTransactions.booked.length, seed.booked.length);
  assert.equal(both.body.cardTransactions.pending.length, 2);
  assert.deepEqual(both.body.cardTransactions._links, {
    cardAccount: { href: `${READ}/${GOLD.resourceId}` },
  });
  const booked = await read(
    app,
    consentId,
    `${report}?bookingStatus=booked&dateFrom=2025-03-01&dateTo=2025-03-31`,
  );
  assert.equal(booked.body.cardTransactions.pending, undefined);
  assert.ok(booked.body.cardTransactions.booked.length > 0);
  for (const entry of booked.body.cardTransactions.booked) {
    assert.ok(entry.bookingDate >= "2025-03-01" && entry.bookingDate <= "2025-03-31");
  }
  const pending = await read(app, consentId, `${report}?bookingStatus=pending`);
  assert.equal(pending.body.cardTransactions.booked, undefined);
  assert.equal(pending.body.cardTransactions.pending[0].bookingDate, undefined);
  const page = await read(
    app,
    consentId,
    `${report}?bookingStatus=booked&itemsPerPage=5&pageIndex=1`,
  );
  assert.deepEqual(
    page.body.cardTransactions.booked.map((t: { cardTransactionId: string }) =>
      t.cardTransactionId
    ),
    seed.booked.slice(5, 10).map((t) => t.cardTransactionId),
  );
  assert.ok(page.body.cardTransactions._links.next.href.startsWith(`${report}?`));
  const delta = await read(
    app,
    consentId,
    `${report}?bookingStatus=booked&entryReferenceFrom=${seed.booked[9].cardTransactionId}`,
  );
  assert.equal(delta.body.cardTransactions.booked.length, 2);
  assertRefused(
    await read(app, consentId, `${report}?bookingStatus=information`),
    400,
    "FORMAT_ERROR",
  );
});
