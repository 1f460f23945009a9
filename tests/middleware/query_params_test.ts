import { assertForwarded, assertRejected, policy, rig } from "../support/hardening.ts";
import { REQUEST_ID } from "../support/requests.ts";

const READ = { headers: { "x-request-id": REQUEST_ID, "consent-id": "c-1" } };
const LIST = "/v1/accounts/acc-1/transactions";

Deno.test("queryParams() requires bookingStatus on the transaction list, from its five values", async () => {
  await using t = await rig(policy());
  assertRejected(await t.call(`${LIST}?dateFrom=2025-01-01`, READ), {
    status: 400,
    code: "FORMAT_ERROR",
    path: "bookingStatus",
    text: /is required/,
  }, t.upstream);
  assertRejected(await t.call(`${LIST}?bookingStatus=settled&dateFrom=2025-01-01`, READ), {
    status: 400,
    code: "FORMAT_ERROR",
    path: "bookingStatus",
    text: /one of information, booked, pending, both, all/,
  }, t.upstream);
  for (const [i, status] of ["booked", "pending", "both", "all"].entries()) {
    assertForwarded(
      await t.call(`${LIST}?bookingStatus=${status}&dateFrom=2025-01-01`, READ),
      t.upstream,
      i + 1,
    );
  }
});

Deno.test("queryParams() requires dateFrom unless delta access or bookingStatus information", async () => {
  await using t = await rig(policy());
  assertRejected(await t.call(`${LIST}?bookingStatus=booked`, READ), {
    status: 400,
    code: "FORMAT_ERROR",
    path: "dateFrom",
    text: /required unless delta access/,
  }, t.upstream);
  const fine = [
    "bookingStatus=information",
    "bookingStatus=booked&deltaList=true",
    "bookingStatus=booked&entryReferenceFrom=ref-1001",
  ];
  for (const [i, query] of fine.entries()) {
    assertForwarded(await t.call(`${LIST}?${query}`, READ), t.upstream, i + 1);
  }
  assertRejected(
    await t.call(`${LIST}?bookingStatus=booked&deltaList=false`, READ),
    {
      status: 400,
      code: "FORMAT_ERROR",
      path: "dateFrom",
    },
    t.upstream,
    3,
  );
});

Deno.test("queryParams() checks dates, booleans and the period", async () => {
  await using t = await rig(policy());
  const cases: [string, string, string][] = [
    ["bookingStatus=booked&dateFrom=2025-02-30", "dateFrom", "FORMAT_ERROR"],
    ["bookingStatus=booked&dateFrom=2025-01-01&dateTo=01.02.2025", "dateTo", "FORMAT_ERROR"],
    ["bookingStatus=booked&dateFrom=2025-01-01&withBalance=yes", "withBalance", "FORMAT_ERROR"],
    ["bookingStatus=booked&deltaList=1", "deltaList", "FORMAT_ERROR"],
    ["bookingStatus=booked&dateFrom=2025-03-01&dateTo=2025-02-01", "dateFrom", "PERIOD_INVALID"],
    ["bookingStatus=booked&entryReferenceFrom=a%2Fb", "entryReferenceFrom", "FORMAT_ERROR"],
  ];
  for (const [query, path, code] of cases) {
    assertRejected(await t.call(`${LIST}?${query}`, READ), { status: 400, code, path }, t.upstream);
  }
  assertRejected(await t.call("/v1/accounts?withBalance=1", READ), {
    status: 400,
    code: "FORMAT_ERROR",
    path: "withBalance",
  }, t.upstream);
  assertForwarded(await t.call("/v1/accounts?withBalance=true", READ), t.upstream);
});

Deno.test("queryParams() rejects a parameter given twice or with control characters", async () => {
  await using t = await rig(policy());
  assertRejected(
    await t.call(`${LIST}?bookingStatus=booked&bookingStatus=all&dateFrom=2025-01-01`, READ),
    {
      status: 400,
      code: "FORMAT_ERROR",
      path: "bookingStatus",
      text: /more than once/,
    },
    t.upstream,
  );
  assertRejected(await t.call(`${LIST}?bookingStatus=booked&dateFrom=2025-01-01%0A`, READ), {
    status: 400,
    code: "FORMAT_ERROR",
    path: "dateFrom",
    text: /control characters/,
  }, t.upstream);
});

Deno.test("queryParams() rejects parameters the operation does not define, unless told to forward", async () => {
  {
    await using t = await rig(policy());
    assertRejected(await t.call(`${LIST}?bookingStatus=information&limit=5`, READ), {
      status: 400,
      code: "PARAMETER_NOT_SUPPORTED",
      path: "limit",
    }, t.upstream);
    assertRejected(
      await t.call("/v1/consents/c-1?debug=1", { headers: { "x-request-id": REQUEST_ID } }),
      {
        status: 400,
        code: "PARAMETER_NOT_SUPPORTED",
        path: "debug",
        text: /takes no query/,
      },
      t.upstream,
    );
  }
  await using t = await rig(policy({ query_params: { unknown_params: "forward" } }));
  assertForwarded(await t.call(`${LIST}?bookingStatus=information&limit=5`, READ), t.upstream);
});

Deno.test("queryParams() checks product paging: page from 0, page-size up to the maximum", async () => {
  await using t = await rig(policy({ query_params: { max_page_size: 50 } }));
  const bad: [string, string][] = [
    ["page=-1", "page"],
    ["page=1.5", "page"],
    ["page=2147483648", "page"],
    ["page=01", "page"],
    ["page-size=0", "page-size"],
    ["page-size=51", "page-size"],
  ];
  for (const [query, path] of bad) {
    assertRejected(await t.call(`/v1/products/en?${query}`), {
      status: 400,
      code: "FORMAT_ERROR",
      path,
      text: /must be an integer from/,
    }, t.upstream);
  }
  assertForwarded(await t.call("/v1/products/deposits?page=0&page-size=50"), t.upstream);
  assertForwarded(await t.call("/v1/products/en?page=2147483647"), t.upstream, 2);
});

Deno.test("queryParams() requires a decimal amount and a client_id on the installment calculator", async () => {
  await using t = await rig(policy());
  const json = {
    headers: { "content-type": "application/json", authorization: "Bearer merchant-token" },
  };
  const base = "/v1/services/installment/calculate";
  const cases: [string, string, RegExp][] = [
    ["client_id=shop-1", "amount", /is required/],
    ["amount=12,50&client_id=shop-1", "amount", /positive decimal number/],
    ["amount=-5&client_id=shop-1", "amount", /positive decimal number/],
    ["amount=0.00&client_id=shop-1", "amount", /positive decimal number/],
    ["amount=100", "client_id", /is required/],
    ["amount=100&client_id=", "client_id", /must not be empty/],
  ];
  for (const [query, path, text] of cases) {
    assertRejected(await t.call(`${base}?${query}`, json), {
      status: 400,
      code: "FORMAT_ERROR",
      path,
      text,
    }, t.upstream);
  }
  assertForwarded(await t.call(`${base}?amount=1500.00&client_id=shop-1`, json), t.upstream);
});

Deno.test("queryParams() lets the transaction list page with pageIndex from 0 and itemsPerPage from 1", async () => {
  await using t = await rig(policy());
  const base = `${LIST}?bookingStatus=booked&dateFrom=2025-01-01`;
  assertForwarded(await t.call(`${base}&pageIndex=0&itemsPerPage=1`, READ), t.upstream);
  assertForwarded(await t.call(`${base}&pageIndex=7&itemsPerPage=50`, READ), t.upstream, 2);
  const bad = [
    ["pageIndex=-1", "pageIndex", /from 0 to 2147483647/],
    ["pageIndex=1.5", "pageIndex", /integer/],
    ["pageIndex=01", "pageIndex", /integer/],
    ["itemsPerPage=0", "itemsPerPage", /from 1 to 2147483647/],
    ["itemsPerPage=ten", "itemsPerPage", /integer/],
    ["itemsPerPage=2147483648", "itemsPerPage", /integer/],
  ] as const;
  for (const [query, path, text] of bad) {
    assertRejected(
      await t.call(`${base}&${query}`, READ),
      { status: 400, code: "FORMAT_ERROR", path, text },
      t.upstream,
      2,
    );
  }
});

Deno.test("queryParams() names a parameter of up to 64 characters whole, a longer one cut", async () => {
  await using t = await rig(policy());
  const cases = [["p".repeat(64), "p".repeat(64)], ["q".repeat(65), `${"q".repeat(64)}...`]];
  for (const [name, shown] of cases) {
    assertRejected(await t.call(`${LIST}?bookingStatus=booked&${name}=1`, READ), {
      status: 400,
      code: "PARAMETER_NOT_SUPPORTED",
      path: shown,
      text: new RegExp(`^Query parameter "${shown.replaceAll(".", "\\.")}" is not supported;`),
    }, t.upstream);
  }
});

Deno.test("queryParams() reads boolean parameters in any case (withBalance=TRUE)", async () => {
  await using t = await rig(policy());
  const fine = [
    "/v1/accounts?withBalance=TRUE",
    "/v1/accounts/acc-1?withBalance=False",
    `${LIST}?bookingStatus=booked&dateFrom=2025-01-01&withBalance=True`,
    `${LIST}?bookingStatus=booked&deltaList=TRUE`,
  ];
  for (const [i, path] of fine.entries()) {
    assertForwarded(await t.call(path, READ), t.upstream, i + 1);
  }
  assertRejected(
    await t.call("/v1/accounts?withBalance=truE1", READ),
    {
      status: 400,
      code: "FORMAT_ERROR",
      path: "withBalance",
      text: /^Query parameter "withBalance" must be "true" or "false" \(any case\)$/,
    },
    t.upstream,
    fine.length,
  );
});
