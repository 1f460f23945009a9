import assert from "node:assert/strict";
import { createSandbox } from "../../src/sandbox/mod.ts";
import { PRODUCTS } from "../../src/sandbox/product_records.ts";
import { CATEGORIES } from "../../src/sandbox/product_specs.ts";
import { assertError, send, sendJson } from "./helpers.ts";

const ORIGIN = "http://localhost";
const GEORGIAN = /[\u10D0-\u10FF]/;

type Product = { productId: string; productCategory: string; name: string };

Deno.test("GET /v1/products/en pages 29 products by 10 with absolute first, next, prev and last links", async () => {
  const app = createSandbox();
  const first = await sendJson(app, "/v1/products/en");
  assert.equal(first.status, 200);
  assert.equal(first.headers.get("Server"), "legacy-core/7.2");
  assert.equal(first.body.products.length, 10);
  const href = (page: number) => ({ href: `${ORIGIN}/v1/products/en?page=${page}&page-size=10` });
  assert.deepEqual(first.body._links, {
    self: href(0),
    first: href(0),
    next: href(1),
    last: href(2),
  });
  const middle = await sendJson(app, "/v1/products/en?page=1");
  assert.deepEqual(middle.body._links, {
    self: href(1),
    first: href(0),
    next: href(2),
    prev: href(0),
    last: href(2),
  });
  const last = await sendJson(app, "/v1/products/en?page=2&page-size=10");
  assert.equal(last.body.products.length, 9);
  assert.deepEqual(last.body._links, {
    self: href(2),
    first: href(0),
    prev: href(1),
    last: href(2),
  });
  const ids = [first, middle, last].flatMap((r) =>
    r.body.products.map((p: Product) => p.productId)
  );
  assert.equal(new Set(ids).size, 29);
});

Deno.test("GET /v1/products/{locale} returns Georgian texts for ge and English for en", async () => {
  const app = createSandbox();
  const ge = await sendJson(app, "/v1/products/ge?page-size=50");
  const en = await sendJson(app, "/v1/products/en?page-size=50");
  assert.ok(ge.body.products.every((p: Product) => GEORGIAN.test(p.name)));
  assert.ok(en.body.products.every((p: Product) => !GEORGIAN.test(p.name)));
  assert.deepEqual(
    ge.body.products.map((p: Product) => p.productId),
    en.body.products.map((p: Product) => p.productId),
  );
});

Deno.test("GET /v1/products/deposits (no locale) wins over {locale} and lists Georgian term deposits", async () => {
  const app = createSandbox();
  const res = await sendJson(app, "/v1/products/deposits?page-size=4");
  assert.equal(res.status, 200);
  assert.equal(res.body.products.length, 4);
  assert.ok(res.body.products.every((p: Product) => p.productCategory === "TERM_DEPOSITS"));
  assert.ok(res.body.products.every((p: Product) => GEORGIAN.test(p.name)));
  assert.deepEqual(res.body._links.next, {
    href: `${ORIGIN}/v1/products/deposits?page=1&page-size=4`,
  });
  const listings = {
    "personal-loans": "PERS_LOANS",
    cards: "CRED_AND_CHRG_CARDS",
    "business-loans": "BUSINESS_LOANS",
  };
  for (const [segment, category] of Object.entries(listings)) {
    for (const path of [`/v1/products/${segment}`, `/v1/products/en/${segment}`]) {
      const listing = await sendJson(app, path);
      assert.equal(listing.status, 200, path);
      assert.ok(listing.body.products.length > 0, path);
      assert.ok(listing.body.products.every((p: Product) => p.productCategory === category), path);
    }
  }
});

Deno.test("GET /v1/products/en/cards returns cards with cardArt and additionalInformation", async () => {
  const res = await sendJson(createSandbox(), "/v1/products/en/cards");
  assert.equal(res.body.products.length, 6);
  for (const card of res.body.products) {
    assert.equal(typeof card.cardArt.imageUri, "string");
    assert.deepEqual(Object.keys(card.additionalInformation).sort(), [
      "eligibilityUri",
      "feesAndPricingUri",
      "overviewUri",
    ]);
    assert.ok(Array.isArray(card.features) && card.features.length > 0);
  }
  assert.deepEqual(res.body._links.last, {
    href: `${ORIGIN}/v1/products/en/cards?page=0&page-size=10`,
  });
});

Deno.test("GET /v1/product/{id} returns one product with a self link; unknown ids answer 404", async () => {
  const app = createSandbox();
  const res = await sendJson(app, "/v1/product/td-gel-12");
  assert.equal(res.status, 200);
  assert.equal(res.body.product.productId, "td-gel-12");
  assert.ok(GEORGIAN.test(res.body.product.name));
  assert.deepEqual(res.body._links, { self: { href: `${ORIGIN}/v1/product/td-gel-12` } });
  await assertError(send(app, "/v1/product/nope"), { status: 404, code: "RESOURCE_UNKNOWN" });
});

Deno.test("Product listings reject a page or page-size that is not a non-negative integer", async () => {
  const app = createSandbox();
  for (
    const query of [
      "page=-1",
      "page=abc",
      "page=1.5",
      "page-size=0",
      "page-size=x",
      "page=99999999999",
    ]
  ) {
    await assertError(send(app, `/v1/products/en?${query}`), { status: 400, code: "FORMAT_ERROR" });
  }
  await assertError(send(app, "/v1/products/fr"), { status: 404, code: "RESOURCE_UNKNOWN" });
  const beyond = await sendJson(app, "/v1/products/en?page=7");
  assert.deepEqual(beyond.body.products, []);
});

Deno.test("PRODUCTS cover every category in both locales with the record fields of 001", () => {
  const counts = Object.fromEntries(CATEGORIES.map((c) => [
    c,
    PRODUCTS.en.filter((p) => p.productCategory === c).length,
  ]));
  assert.deepEqual(counts, {
    TERM_DEPOSITS: 6,
    PERS_LOANS: 6,
    CRED_AND_CHRG_CARDS: 6,
    BUSINESS_LOANS: 5,
    RESIDENTIAL_MORTGAGES: 3,
    TRANS_AND_SAVINGS_ACCS: 3,
  });
  for (const locale of ["ge", "en"] as const) {
    for (const p of PRODUCTS[locale]) {
      for (
        const field of [
          "effectiveFrom",
          "lastUpdated",
          "name",
          "description",
          "brand",
          "isTailored",
          "features",
          "constraints",
          "eligibility",
          "fees",
        ]
      ) {
        assert.ok(field in p, `${p.productId} ${field}`);
      }
      const lending = ["PERS_LOANS", "BUSINESS_LOANS", "RESIDENTIAL_MORTGAGES"].includes(
        p.productCategory,
      );
      if (lending) assert.ok(Array.isArray(p.lendingRates), p.productId);
      if (p.productCategory === "TERM_DEPOSITS") {
        assert.ok(Array.isArray(p.depositRates), p.productId);
      }
    }
  }
});
