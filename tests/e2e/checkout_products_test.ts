import assert from "node:assert/strict";
import { startGateway } from "../support/gateway.ts";
import { assertPublicLinks, call } from "./flow.ts";

/** What a merchant sends; the bearer token is checked by the gateway's token policy. */
const MERCHANT = { authorization: "Bearer sandbox-merchant-token" };

Deno.test("e2e: a checkout order is created and read through its self link", async () => {
  await using gateway = await startGateway();
  const order = await call(gateway, "POST", "/api/v1/checkout/orders", {
    headers: MERCHANT,
    body: {
      intent: "CAPTURE",
      items: [
        { amount: "30.00", description: "Khachapuri cookbook", quantity: 1, product_id: "B-1" },
        { amount: "12.50", description: "Tea", quantity: 2, product_id: "T-9" },
      ],
      locale: "en-US",
      shop_order_id: "SHOP-1001",
      redirect_url: "https://shop.example/back",
      show_shop_order_id_on_extract: true,
      capture_method: "MANUAL",
      purchase_units: [{ amount: { currency_code: "GEL", value: 55 } }],
    },
  });
  assert.equal(order.status, 201);
  assert.equal(order.headers.get("deprecation"), "true");
  const self = order.body.links.find((l: { rel: string }) => l.rel === "self");
  const approve = order.body.links.find((l: { rel: string }) => l.rel === "approve");
  assert.equal(self.href, `/api/v1/checkout/orders/${self.order_id}`, "upstream host removed");
  assert.match(approve.href, /^https:\/\/sandbox-bank\.example\//, "approve link left alone");
  const details = await call(gateway, "GET", self.href, { headers: MERCHANT });
  assert.equal(details.status, 200);
  assert.equal(details.body.statement_text, "SHOP-1001 Khachapuri cookbook,Tea".slice(0, 10 + 25));
  assert.equal(details.body.capture_method, "MANUAL");
});

Deno.test("e2e: the installment calculator answers per merchant", async () => {
  await using gateway = await startGateway();
  const a = await call(
    gateway,
    "GET",
    "/v1/services/installment/calculate?amount=1200.00&client_id=merchant-a",
    { headers: { ...MERCHANT, "content-type": "application/json" } },
  );
  assert.equal(a.status, 200);
  assert.equal(a.headers.get("deprecation"), "true");
  assert.ok(
    a.body.some((o: { month: number; discount_code: string; amount: string }) =>
      o.month === 3 && o.discount_code === "ZERO" && o.amount === "400.00"
    ),
  );
  const b = await call(
    gateway,
    "GET",
    "/v1/services/installment/calculate?amount=1200.00&client_id=merchant-b",
    { headers: { ...MERCHANT, "content-type": "application/json" } },
  );
  assert.notDeepEqual(a.body, b.body);
});

Deno.test("e2e: the product catalogue pages with and without locale", async () => {
  await using gateway = await startGateway();
  const first = await call(gateway, "GET", "/v1/products/en");
  assert.equal(first.status, 200);
  assert.equal(first.body.products.length, 10);
  assertPublicLinks(first.body, "127.0.0.1");
  const next = first.body._links.next.href;
  assert.match(next, /^\/v1\/products\/en\?/);
  const second = await call(gateway, "GET", next);
  assert.equal(second.body.products.length, 10);
  const last = await call(gateway, "GET", "/v1/products/en?page=2&page-size=10");
  assert.equal(last.body.products.length, 9);
  assert.equal(last.body._links.next, undefined);

  const georgian = await call(gateway, "GET", "/v1/products/deposits");
  const english = await call(gateway, "GET", "/v1/products/en/deposits");
  assert.equal(georgian.body.products.length, english.body.products.length);
  assert.notEqual(georgian.body.products[0].name, english.body.products[0].name);
  for (
    const [path, category] of [
      ["/v1/products/ge/personal-loans", "PERS_LOANS"],
      ["/v1/products/en/cards", "CRED_AND_CHRG_CARDS"],
      ["/v1/products/en/business-loans", "BUSINESS_LOANS"],
      ["/v1/products/personal-loans", "PERS_LOANS"],
      ["/v1/products/cards", "CRED_AND_CHRG_CARDS"],
      ["/v1/products/business-loans", "BUSINESS_LOANS"],
      ["/v1/products/ge/deposits?page-size=3", "TERM_DEPOSITS"],
    ]
  ) {
    const listing = await call(gateway, "GET", path);
    assert.equal(listing.status, 200, path);
    assert.ok(listing.body.products.length > 0, path);
    for (const p of listing.body.products) assert.equal(p.productCategory, category, path);
  }
  const one = await call(gateway, "GET", "/v1/product/td-gel-12");
  assert.equal(one.status, 200);
  assert.equal(one.body.product.productId, "td-gel-12");
});
