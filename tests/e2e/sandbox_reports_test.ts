/**
 * What a TPP tests against the sandbox through the gateway: transaction reports in pages with
 * `first`, `previous`, `next` and `last` links, delta reports (`entryReferenceFrom`, `deltaList`),
 * balances with a report (`withBalance`), `ownerName` in the account list when the consent asks
 * for it, and the periodic pain.001 initiation as a multipart form.
 */
import assert from "node:assert/strict";
import { ACCOUNTS } from "../../src/sandbox/data.ts";
import { PAIN_001_EXAMPLE, standingOrderExample } from "../../src/http/openapi_examples.ts";
import { contractOf } from "../conformance/contract.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { recurringConsent } from "../support/consents.ts";
import { assertPublicLinks, call, PSU_IP } from "./flow.ts";

const [MAIN, SAVINGS] = ACCOUNTS;
const TAG = MAIN.iban.slice(-4);

/** A valid consent with `access`, authorised through the gateway. */
async function consentFor(gateway: TestGateway, access: Record<string, unknown>): Promise<string> {
  const created = await call(gateway, "POST", "/v1/consents", {
    headers: { "psu-ip-address": PSU_IP, "psu-id": "PSU-0001" },
    body: recurringConsent({ access, validUntil: "9999-12-31" }),
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const done = await call(gateway, "PUT", created.body._links.scaStatus.href, {
    body: { confirmationCode: "1" },
  });
  assert.equal(done.body.scaStatus, "finalised");
  return created.body.consentId;
}

function ids(list: { transactionId: string }[]): string[] {
  return list.map((t) => t.transactionId.slice(5));
}

Deno.test("e2e sandbox: a transaction report pages with first, previous, next and last links", async () => {
  await using gateway = await startGateway();
  const consentId = await consentFor(gateway, { transactions: [{ iban: MAIN.iban }] });
  const headers = { "consent-id": consentId };
  const report = `/v1/accounts/${MAIN.resourceId}/transactions`;
  const first = await call(
    gateway,
    "GET",
    `${report}?bookingStatus=both&dateFrom=2025-01-01&itemsPerPage=5`,
    { headers },
  );
  assert.equal(first.status, 200, JSON.stringify(first.body));
  assertPublicLinks(first.body);
  const links = first.body.transactions._links;
  assert.deepEqual(ids(first.body.transactions.booked), ["B01", "B02", "B03", "B04", "B05"]);
  assert.equal(first.body.transactions.pending.length, 2, "pending entries on the first page");
  assert.equal(links.previous, undefined);
  for (const name of ["first", "next", "last"]) {
    assert.ok(links[name].href.startsWith(`${report}?`), `${name}: ${links[name].href}`);
  }
  const second = await call(gateway, "GET", links.next.href, { headers });
  assert.equal(second.status, 200, JSON.stringify(second.body));
  assert.deepEqual(ids(second.body.transactions.booked), ["B06", "B07", "B08", "B09", "B10"]);
  assert.deepEqual(second.body.transactions.pending, []);
  assert.equal(second.body.transactions._links.previous.href, links.first.href);
  const last = await call(gateway, "GET", second.body.transactions._links.next.href, { headers });
  assert.deepEqual(ids(last.body.transactions.booked), ["B11", "B12"]);
  assert.equal(last.body.transactions._links.next, undefined);
  assert.equal(last.body.transactions._links.last.href, links.last.href);
  const beyond = await call(
    gateway,
    "GET",
    `${report}?bookingStatus=booked&dateFrom=2025-01-01&itemsPerPage=5&pageIndex=3`,
    { headers },
  );
  assert.equal(beyond.status, 400);
  assert.equal(beyond.body.tppMessages[0].code, "FORMAT_ERROR");
});

Deno.test("e2e sandbox: entryReferenceFrom and deltaList report what is new; withBalance adds balances", async () => {
  await using gateway = await startGateway();
  const consentId = await consentFor(gateway, {
    balances: [{ iban: MAIN.iban }],
    transactions: [{ iban: MAIN.iban }],
  });
  const headers = { "consent-id": consentId };
  const report = `/v1/accounts/${MAIN.resourceId}/transactions?bookingStatus=booked`;
  const after = await call(gateway, "GET", `${report}&entryReferenceFrom=${TAG}-B10`, { headers });
  assert.equal(after.status, 200, JSON.stringify(after.body));
  assert.deepEqual(ids(after.body.transactions.booked), ["B11", "B12"]);
  assert.equal(after.body.transactions.booked[0].entryReference, `${TAG}-B11`);
  const unknown = await call(gateway, "GET", `${report}&entryReferenceFrom=NOPE`, { headers });
  assert.equal(unknown.status, 400);

  const withBalance = await call(
    gateway,
    "GET",
    `${report}&dateFrom=2025-06-01&withBalance=true`,
    { headers },
  );
  assert.equal(withBalance.status, 200, JSON.stringify(withBalance.body));
  assert.ok(withBalance.body.balances.length > 0, "balances with the report");
  assert.ok(withBalance.body.balances.every((b: { balanceAmount?: unknown }) => b.balanceAmount));

  const otherConsent = await consentFor(gateway, {
    balances: [{ iban: MAIN.iban }],
    transactions: [{ iban: MAIN.iban }],
  });
  const delta = { "consent-id": otherConsent };
  const firstDelta = await call(gateway, "GET", `${report}&deltaList=true`, { headers: delta });
  assert.equal(firstDelta.body.transactions.booked.length, 12, "everything, the first time");
  const secondDelta = await call(gateway, "GET", `${report}&deltaList=TRUE`, { headers: delta });
  assert.deepEqual(secondDelta.body.transactions.booked, [], "nothing booked since");
});

Deno.test("e2e sandbox: the account list shows ownerName where the consent asks for it", async () => {
  await using gateway = await startGateway();
  const asked = await consentFor(gateway, {
    accounts: [{ iban: MAIN.iban }, { iban: SAVINGS.iban }],
    additionalInformation: { ownerName: [{ iban: MAIN.iban }] },
  });
  const list = await call(gateway, "GET", "/v1/accounts", { headers: { "consent-id": asked } });
  assert.equal(list.status, 200, JSON.stringify(list.body));
  const owners = Object.fromEntries(
    list.body.accounts.map((a: { iban: string; ownerName?: string }) => [a.iban, a.ownerName]),
  );
  assert.deepEqual(owners, { [MAIN.iban]: MAIN.ownerName, [SAVINGS.iban]: undefined });

  const plain = await consentFor(gateway, { accounts: [{ iban: MAIN.iban }] });
  const bare = await call(gateway, "GET", "/v1/accounts", { headers: { "consent-id": plain } });
  assert.equal(bare.body.accounts[0].ownerName, undefined, "not asked, not shown");
});

Deno.test("e2e sandbox: a periodic pain.001 payment sent as a multipart form is created", async () => {
  await using gateway = await startGateway();
  const today = new Date().toISOString().slice(0, 10);
  const form = new FormData();
  form.set("xml_sct", new Blob([PAIN_001_EXAMPLE], { type: "application/xml" }), "sct.xml");
  form.set(
    "json_standingorderType",
    new Blob([JSON.stringify(standingOrderExample(today))], { type: "application/json" }),
    "order.json",
  );
  const path = "/v1/periodic-payments/pain.001-sepa-credit-transfers";
  const requestId = crypto.randomUUID();
  const response = await gateway.fetch(path, {
    method: "POST",
    headers: { "x-request-id": requestId, "psu-ip-address": PSU_IP },
    body: form,
  });
  const body = await response.json();
  assert.equal(response.status, 201, JSON.stringify(body));
  (await contractOf(gateway)).assertAnswer("POST", path, {
    status: response.status,
    headers: response.headers,
    body,
  });
  assert.equal(body.transactionStatus, "RCVD");
  const read = await gateway.fetch(`${path}/${body.paymentId}`, {
    headers: { "x-request-id": crypto.randomUUID(), accept: "application/xml" },
  });
  assert.equal(read.status, 200);
  assert.equal(await read.text(), PAIN_001_EXAMPLE);
});
