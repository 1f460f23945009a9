import assert from "node:assert/strict";
import { ACCOUNTS } from "../../src/sandbox/data.ts";
import { assertError, sandboxWithClock, send, sendJson, validConsent } from "./helpers.ts";

const [MAIN, SAVINGS] = ACCOUNTS;
const LIST = `/psd2/v1/accounts/${MAIN.resourceId}/transactions`;

async function setup(start?: string) {
  const { app, clock } = sandboxWithClock(start);
  const consentId = await validConsent(app, {
    access: { transactions: [{ iban: MAIN.iban }], accounts: [{ iban: SAVINGS.iban }] },
  });
  const list = (query: string) =>
    sendJson(app, `${LIST}?${query}`, { headers: { "Consent-ID": consentId } });
  return { app, clock, consentId, list };
}

type Entry = { transactionId: string; bookingDate?: string; valueDate: string };

Deno.test("GET transactions filters by bookingStatus: booked, pending, both, information, all", async () => {
  const { list } = await setup();
  const booked = await list("bookingStatus=booked");
  assert.equal(booked.status, 200);
  assert.deepEqual(booked.body.account, { iban: MAIN.iban });
  assert.equal(booked.body.transactions.booked.length, 12);
  assert.equal(booked.body.transactions.pending, undefined);
  assert.ok(booked.body.transactions.booked.every((t: Entry) => t.bookingDate));
  assert.deepEqual(booked.body.transactions._links, {
    account: { href: `/psd2/v1/accounts/${MAIN.resourceId}` },
  });

  const pending = await list("bookingStatus=pending");
  assert.equal(pending.body.transactions.booked, undefined);
  assert.equal(pending.body.transactions.pending.length, 2);
  assert.ok(pending.body.transactions.pending.every((t: Entry) => !("bookingDate" in t)));

  const both = await list("bookingStatus=both");
  assert.equal(both.body.transactions.booked.length, 12);
  assert.equal(both.body.transactions.pending.length, 2);
  assert.equal(both.body.transactions.information, undefined);

  const information = await list("bookingStatus=information");
  assert.equal(information.body.transactions.booked, undefined);
  assert.equal(information.body.transactions.information.length, 1);

  const all = await list("bookingStatus=all");
  assert.equal(all.body.transactions.booked.length, 12);
  assert.equal(all.body.transactions.pending.length, 2);
  assert.equal(all.body.transactions.information.length, 1);
});

Deno.test("GET transactions filters booked by bookingDate and pending by valueDate, inclusive", async () => {
  const { list } = await setup();
  const march = await list("bookingStatus=both&dateFrom=2025-03-06&dateTo=2025-03-21");
  assert.deepEqual(march.body.transactions.booked.map((t: Entry) => t.bookingDate), [
    "2025-03-06",
    "2025-03-21",
  ]);
  assert.deepEqual(march.body.transactions.pending, []);
  const late = await list("bookingStatus=both&dateFrom=2025-06-20&dateTo=2025-06-29");
  assert.deepEqual(late.body.transactions.booked, []);
  assert.deepEqual(late.body.transactions.pending.map((t: Entry) => t.valueDate), ["2025-06-28"]);
});

Deno.test("GET transactions ends at today by default (the sandbox clock)", async () => {
  const { list } = await setup("2025-03-01T12:00:00Z");
  const res = await list("bookingStatus=both");
  assert.deepEqual(res.body.transactions.booked.map((t: Entry) => t.bookingDate), [
    "2025-01-05",
    "2025-01-20",
    "2025-02-04",
    "2025-02-19",
  ]);
  assert.deepEqual(res.body.transactions.pending, []);
});

Deno.test("GET transactions links each entry to its details, which add mandateId", async () => {
  const { app, consentId, list } = await setup();
  const res = await list("bookingStatus=booked");
  const entry = res.body.transactions.booked[0];
  assert.equal(entry.transactionId, "4917-B01");
  const href = entry._links.transactionDetails.href;
  assert.equal(href, `${LIST}/4917-B01`);
  const details = await sendJson(app, href, { headers: { "Consent-ID": consentId } });
  assert.equal(details.status, 200);
  const { _links: _, ...fields } = entry;
  assert.deepEqual(details.body, {
    transactionsDetails: { ...fields, mandateId: "MNDT-4917-B01" },
  });
  await assertError(
    send(app, `${LIST}/4917-B99`, { headers: { "Consent-ID": consentId } }),
    { status: 404, code: "RESOURCE_UNKNOWN" },
  );
});

Deno.test("GET transactions rejects a bad bookingStatus or date and an account without transaction access", async () => {
  const { app, consentId, list } = await setup();
  for (const query of ["", "bookingStatus=any", "bookingStatus=booked&dateFrom=2025-13-01"]) {
    const res = await list(query);
    assert.equal(res.status, 400, query);
    assert.equal(res.body.tppMessages[0].code, "FORMAT_ERROR");
  }
  await assertError(
    send(app, `/psd2/v1/accounts/${SAVINGS.resourceId}/transactions?bookingStatus=booked`, {
      headers: { "Consent-ID": consentId },
    }),
    { status: 401, code: "CONSENT_INVALID" },
  );
});
