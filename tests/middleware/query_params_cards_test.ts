/**
 * query_params on the card account operations of 1.3.11: the card transaction list's query as
 * the official file lists it (`bookingStatusCard`: booked, pending, both; dateFrom unless delta
 * access; dateTo, entryReferenceFrom, deltaList), the account report's paging, and no query on the
 * card account list and details.
 */
import { assertForwarded, assertRejected, policy, rig } from "../support/hardening.ts";
import { REQUEST_ID } from "../support/requests.ts";

const READ = { headers: { "x-request-id": REQUEST_ID, "consent-id": "c-1" } };
const LIST = "/v1/card-accounts/card-1/transactions";

Deno.test("queryParams() requires a card bookingStatus on the card transaction list: booked, pending or both", async () => {
  await using t = await rig(policy());
  assertRejected(await t.call(`${LIST}?dateFrom=2025-01-01`, READ), {
    status: 400,
    code: "FORMAT_ERROR",
    path: "bookingStatus",
    text: /is required/,
  }, t.upstream);
  for (const status of ["information", "all", "settled"]) {
    assertRejected(await t.call(`${LIST}?bookingStatus=${status}&dateFrom=2025-01-01`, READ), {
      status: 400,
      code: "FORMAT_ERROR",
      path: "bookingStatus",
      text: /^Query parameter "bookingStatus" must be one of booked, pending, both$/,
    }, t.upstream);
  }
  for (const [i, status] of ["booked", "pending", "both"].entries()) {
    assertForwarded(
      await t.call(`${LIST}?bookingStatus=${status}&dateFrom=2025-01-01`, READ),
      t.upstream,
      i + 1,
    );
  }
});

Deno.test("queryParams() requires dateFrom on the card transaction list unless delta access", async () => {
  await using t = await rig(policy());
  assertRejected(await t.call(`${LIST}?bookingStatus=booked`, READ), {
    status: 400,
    code: "FORMAT_ERROR",
    path: "dateFrom",
    text: /required unless delta access/,
  }, t.upstream);
  const fine = [
    "bookingStatus=booked&deltaList=true",
    "bookingStatus=both&entryReferenceFrom=ct-1001",
    "bookingStatus=booked&dateFrom=2025-01-01&dateTo=2025-06-30&pageIndex=1&itemsPerPage=5",
  ];
  for (const [i, query] of fine.entries()) {
    assertForwarded(await t.call(`${LIST}?${query}`, READ), t.upstream, i + 1);
  }
});

Deno.test("queryParams() checks the card transaction list's dates, booleans, period and paging", async () => {
  await using t = await rig(policy());
  const cases: [string, string, string][] = [
    ["bookingStatus=booked&dateFrom=2025-02-30", "dateFrom", "FORMAT_ERROR"],
    ["bookingStatus=booked&dateFrom=2025-01-01&dateTo=01.02.2025", "dateTo", "FORMAT_ERROR"],
    ["bookingStatus=booked&deltaList=1", "deltaList", "FORMAT_ERROR"],
    ["bookingStatus=booked&dateFrom=2025-03-01&dateTo=2025-02-01", "dateFrom", "PERIOD_INVALID"],
    ["bookingStatus=booked&entryReferenceFrom=a%2Fb", "entryReferenceFrom", "FORMAT_ERROR"],
    ["bookingStatus=booked&dateFrom=2025-01-01&pageIndex=-1", "pageIndex", "FORMAT_ERROR"],
    ["bookingStatus=booked&dateFrom=2025-01-01&itemsPerPage=0", "itemsPerPage", "FORMAT_ERROR"],
  ];
  for (const [query, path, code] of cases) {
    assertRejected(await t.call(`${LIST}?${query}`, READ), { status: 400, code, path }, t.upstream);
  }
});

Deno.test("queryParams() takes no withBalance on card reads and no query on the card list and details", async () => {
  await using t = await rig(policy());
  const cases: [string, string][] = [
    [`${LIST}?bookingStatus=booked&dateFrom=2025-01-01&withBalance=true`, "withBalance"],
    ["/v1/card-accounts?withBalance=true", "withBalance"],
    ["/v1/card-accounts/card-1?withBalance=true", "withBalance"],
    ["/v1/card-accounts/card-1/balances?dateFrom=2025-01-01", "dateFrom"],
  ];
  for (const [path, name] of cases) {
    assertRejected(await t.call(path, READ), {
      status: 400,
      code: "PARAMETER_NOT_SUPPORTED",
      path: name,
    }, t.upstream);
  }
  assertForwarded(await t.call("/v1/card-accounts", READ), t.upstream);
});
