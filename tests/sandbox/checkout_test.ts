import assert from "node:assert/strict";
import { assertError, sandboxWithClock, send, sendJson } from "./helpers.ts";

const AUTH = { Authorization: "Bearer eyJhbGciOiJSUzI1NiJ9.e30.sig" };
const ORDER = {
  intent: "CAPTURE",
  items: [
    { amount: "50.00", description: "Wireless headphones", quantity: 1, product_id: "p-1" },
    { amount: "10.00", description: "Charging case", quantity: 2, product_id: "p-2" },
  ],
  locale: "ka",
  shop_order_id: "SO-77",
  redirect_url: "https://shop.example/return",
  show_shop_order_id_on_extract: true,
  purchase_units: [{ amount: { currency_code: "GEL", value: 70 } }],
};

Deno.test("POST checkout order answers 201 with payment_hash and absolute self and approve links", async () => {
  const { app } = sandboxWithClock();
  const res = await sendJson(app, "http://sandbox.test:8081/api/v1/checkout/orders", {
    method: "POST",
    headers: AUTH,
    body: ORDER,
  });
  assert.equal(res.status, 201);
  assert.equal(res.headers.get("X-Powered-By"), "CoreBanking");
  assert.equal(res.body.status, "CREATED");
  assert.match(res.body.payment_hash, /^[0-9a-f]{64}$/);
  const [self, approve] = res.body.links;
  const orderId = self.order_id;
  assert.deepEqual(self, {
    href: `http://sandbox.test:8081/api/v1/checkout/orders/${orderId}`,
    rel: "self",
    method: "GET",
    order_id: orderId,
  });
  assert.deepEqual(approve, {
    href: `https://sandbox-bank.example/checkout/${orderId}/approve`,
    rel: "approve",
    method: "REDIRECT",
    order_id: orderId,
  });
});

Deno.test("GET checkout order returns the details with AUTOMATIC capture by default and the statement text", async () => {
  const { app } = sandboxWithClock();
  const created = await sendJson(app, "/api/v1/checkout/orders", {
    method: "POST",
    headers: AUTH,
    body: ORDER,
  });
  const read = await sendJson(app, new URL(created.body.links[0].href).pathname, { headers: AUTH });
  assert.equal(read.status, 200);
  assert.equal(read.body.status, "CREATED");
  assert.equal(read.body.intent, "CAPTURE");
  assert.equal(read.body.capture_method, "AUTOMATIC");
  assert.deepEqual(read.body.purchase_units, ORDER.purchase_units);
  assert.equal(read.body.statement_text, "SO-77 Wireless headphones,Charg");
  assert.equal(read.body.payment_hash, created.body.payment_hash);
  assert.equal(read.body.hold, undefined);
});

Deno.test("A MANUAL capture hold is BLOCKED and released automatically once 30 days have passed", async () => {
  const { app, clock } = sandboxWithClock("2025-07-01T10:00:00Z");
  const created = await sendJson(app, "/api/v1/checkout/orders", {
    method: "POST",
    headers: AUTH,
    body: { ...ORDER, capture_method: "MANUAL" },
  });
  const path = new URL(created.body.links[0].href).pathname;
  const hold = async () => (await sendJson(app, path, { headers: AUTH })).body.hold;
  const first = await hold();
  assert.equal(first.status, "BLOCKED");
  assert.deepEqual(first.amount, { currency_code: "GEL", value: 70 });
  assert.equal(first.release_at, "2025-07-31T10:00:00.000Z");
  clock.advanceDays(29.99);
  assert.equal((await hold()).status, "BLOCKED");
  clock.advanceDays(0.01);
  assert.equal((await hold()).status, "RELEASED");
});

Deno.test("Checkout answers 401 without a bearer token, 404 for an unknown order, 400 for bad JSON", async () => {
  const { app } = sandboxWithClock();
  await assertError(send(app, "/api/v1/checkout/orders", { method: "POST", body: ORDER }), {
    status: 401,
    code: "TOKEN_INVALID",
  });
  await assertError(
    send(app, "/api/v1/checkout/orders", {
      method: "POST",
      headers: { Authorization: "Basic abc" },
      body: ORDER,
    }),
    { status: 401, code: "TOKEN_INVALID" },
  );
  await assertError(
    send(app, `/api/v1/checkout/orders/${crypto.randomUUID()}`, { headers: AUTH }),
    {
      status: 404,
      code: "RESOURCE_UNKNOWN",
    },
  );
  await assertError(
    send(app, "/api/v1/checkout/orders", {
      method: "POST",
      headers: { ...AUTH, "content-type": "application/json" },
      body: "{",
    }),
    { status: 400, code: "FORMAT_ERROR" },
  );
});
