import assert from "node:assert/strict";
import { assertForwarded, assertRejected, policy, rawRequest, rig } from "../support/hardening.ts";
import { initiationHeaders, REQUEST_ID, singlePayment } from "../support/requests.ts";

const PAYMENT = JSON.stringify(singlePayment());
const ID = { "x-request-id": REQUEST_ID };

function initiate() {
  return { method: "POST", headers: initiationHeaders(), body: PAYMENT };
}

Deno.test("pathParams() rejects a payment-service outside the three with PARAMETER_NOT_SUPPORTED", async () => {
  await using t = await rig(policy());
  for (const path of ["/v1/instant-payments/domestic", "/v1/payment/domestic/p-1/status"]) {
    const outcome = await t.call(path, path.endsWith("status") ? { headers: ID } : initiate());
    assertRejected(outcome, {
      status: 400,
      code: "PARAMETER_NOT_SUPPORTED",
      path: "payment-service",
      text: /must be one of payments, bulk-payments, periodic-payments/,
    }, t.upstream);
  }
});

Deno.test("pathParams() rejects an unknown payment-product with 404 PRODUCT_UNKNOWN", async () => {
  await using t = await rig(policy());
  assertRejected(await t.call("/v1/payments/sepa-transfers", initiate()), {
    status: 404,
    code: "PRODUCT_UNKNOWN",
    path: "payment-product",
    text: /"sepa-transfers" is not a product of the interface/,
  }, t.upstream);
});

Deno.test("pathParams() rejects a known product the bank does not offer with 403 PRODUCT_INVALID", async () => {
  await using t = await rig(policy({ path_params: { offered_products: ["domestic"] } }));
  assertRejected(await t.call("/v1/payments/foreign", initiate()), {
    status: 403,
    code: "PRODUCT_INVALID",
    path: "payment-product",
    text: /not offered; offered: domestic/,
  }, t.upstream);
  assertForwarded(await t.call("/v1/payments/domestic", initiate()), t.upstream);
});

Deno.test("pathParams() offers aspsp, domestic and foreign by default", async () => {
  await using t = await rig(policy());
  for (const [i, product] of ["aspsp", "domestic", "foreign"].entries()) {
    assertForwarded(await t.call(`/v1/payments/${product}`, initiate()), t.upstream, i + 1);
  }
  assertRejected(
    await t.call("/v1/payments/sepa-credit-transfers", initiate()),
    {
      status: 403,
      code: "PRODUCT_INVALID",
    },
    t.upstream,
    3,
  );
});

Deno.test("pathParams() rejects ids with encoded slashes, dot segments and other tricks", async () => {
  await using t = await rig(policy());
  const tricks = ["a%2Fb", "a%2fb", "a%00b", "a%25b", "a%5Cb", "a;b", "%C3%A9", "a%20b"];
  for (const id of tricks) {
    assertRejected(await t.call(`/v1/consents/${id}/status`, { headers: ID }), {
      status: 400,
      code: "FORMAT_ERROR",
      path: "consentId",
      text: /^Path parameter "consentId" must/,
    }, t.upstream);
  }
});

Deno.test("pathParams() bounds the length of ids", async () => {
  await using t = await rig(policy({ path_params: { max_id_length: 36 } }));
  assertRejected(
    await t.call(`/v1/accounts/${"a".repeat(37)}/balances`, {
      headers: { ...ID, "consent-id": "c-1" },
    }),
    { status: 400, code: "FORMAT_ERROR", path: "account-id", text: /at most 36 characters/ },
    t.upstream,
  );
  assertForwarded(
    await t.call(`/v1/accounts/5b1f3c2e-7a41-4d6b-9c0e-000000000001/balances`, {
      headers: { ...ID, "consent-id": "c-1" },
    }),
    t.upstream,
  );
});

Deno.test("pathParams() rejects a product catalogue locale other than ge or en", async () => {
  await using t = await rig(policy());
  assertRejected(await t.call("/v1/products/fr"), {
    status: 400,
    code: "PARAMETER_NOT_SUPPORTED",
    path: "locale",
    text: /must be one of ge, en/,
  }, t.upstream);
  assertForwarded(await t.call("/v1/products/ge/deposits"), t.upstream);
});

Deno.test("pathParams() takes the checkout's spelling of a catalogue locale and sends the core ge or en", async () => {
  await using t = await rig(policy());
  const sent = [
    ["/v1/products/ka/deposits?page=0", "/deposits?page=0"],
    ["/v1/products/en-US", ""],
    ["/v1/products/en/cards", "/cards"],
    ["/v1/products/ge", ""],
  ];
  const expected = ["ge", "en", "en", "ge"];
  for (const [i, [path]] of sent.entries()) {
    assertForwarded(await t.call(path), t.upstream, i + 1);
  }
  assert.deepEqual(
    t.upstream.received.map((r) => r.path),
    sent.map(([, rest], i) => `/v1/products/${expected[i]}${rest}`),
  );
  assertRejected(
    await t.call("/v1/products/en-GB"),
    {
      status: 400,
      code: "PARAMETER_NOT_SUPPORTED",
      path: "locale",
      text: /^Path parameter "locale" must be one of ge, en \(or ka, en-US\), not "en-GB"$/,
    },
    t.upstream,
    sent.length,
  );
});

Deno.test("pathParams() in report mode still never lets an encoded slash change the path", async () => {
  await using t = await rig(policy({ path_params: { mode: "report" } }));
  const outcome = await t.call("/v1/consents/a%2F..%2F..%2Faccounts/status", { headers: ID });
  assertForwarded(outcome, t.upstream);
  assert.equal(t.upstream.received[0].path, "/psd2/v1/consents/a%2F..%2F..%2Faccounts/status");
});

Deno.test("pathParams() rejects dot segments sent as they are or percent-encoded", async () => {
  await using t = await rig(policy());
  for (const id of ["..", ".", "%2e%2e", "%2E", "..."]) {
    const response = await rawRequest(t.gateway.url, `/v1/consents/${id}/status`, ID);
    assert.equal(response.status, 400, id);
    const message = response.body.tppMessages![0];
    assert.equal(message.code, "FORMAT_ERROR");
    assert.equal(message.path, "consentId");
    assert.match(message.text, /must not be "\." or "\.\."/);
  }
  assert.equal(t.upstream.received.length, 0);
});

Deno.test("pathParams() quotes a refused value of up to 40 characters whole, a longer one cut", async () => {
  await using t = await rig(policy());
  const cases = [["p".repeat(40), "p".repeat(40)], ["q".repeat(41), `${"q".repeat(40)}...`]];
  for (const [product, shown] of cases) {
    assertRejected(await t.call(`/v1/payments/${product}`, initiate()), {
      status: 404,
      code: "PRODUCT_UNKNOWN",
      path: "payment-product",
      text: new RegExp(`^Payment product "${shown.replaceAll(".", "\\.")}" is not a product`),
    }, t.upstream);
  }
});
