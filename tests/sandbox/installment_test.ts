import assert from "node:assert/strict";
import { createSandbox } from "../../src/sandbox/mod.ts";
import { assertError, send, sendJson } from "./helpers.ts";

const CALC = "/v1/services/installment/calculate";

Deno.test("GET installment/calculate returns merchant-a's ZERO and STANDARD offers", async () => {
  const res = await sendJson(createSandbox(), `${CALC}?amount=1200&client_id=merchant-a`);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("Server"), "legacy-core/7.2");
  assert.deepEqual(res.body, [
    { month: 3, amount: "400.00", discount_code: "ZERO" },
    { month: 6, amount: "200.00", discount_code: "ZERO" },
    { month: 12, amount: "100.00", discount_code: "ZERO" },
    { month: 6, amount: "210.63", discount_code: "STANDARD" },
    { month: 12, amount: "110.02", discount_code: "STANDARD" },
    { month: 24, amount: "59.91", discount_code: "STANDARD" },
  ]);
});

Deno.test("GET installment/calculate gives another merchant other durations", async () => {
  const res = await sendJson(createSandbox(), `${CALC}?amount=1000.00&client_id=merchant-b`);
  assert.deepEqual(
    res.body.map((o: { month: number; discount_code: string }) => [o.month, o.discount_code]),
    [
      [4, "ZERO"],
      [10, "ZERO"],
      [12, "STANDARD"],
      [18, "STANDARD"],
      [36, "STANDARD"],
    ],
  );
  const c = await sendJson(createSandbox(), `${CALC}?amount=1000&client_id=merchant-c`);
  assert.ok(c.body.every((o: { discount_code: string }) => o.discount_code === "STANDARD"));
});

Deno.test("GET installment/calculate rounds ZERO offers half up to two decimals", async () => {
  const res = await sendJson(createSandbox(), `${CALC}?amount=100&client_id=merchant-a`);
  assert.deepEqual(res.body.slice(0, 3).map((o: { amount: string }) => o.amount), [
    "33.33",
    "16.67",
    "8.33",
  ]);
  assert.ok(res.body.every((o: { amount: string }) => /^\d+\.\d{2}$/.test(o.amount)));
});

Deno.test("GET installment/calculate answers 400 for a bad amount or no client_id, 404 for an unknown one", async () => {
  const app = createSandbox();
  for (
    const query of [
      "client_id=merchant-a",
      "amount=12a&client_id=merchant-a",
      "amount=-5&client_id=merchant-a",
      "amount=0&client_id=merchant-a",
      "amount=1.234&client_id=merchant-a",
      "amount=100",
    ]
  ) {
    await assertError(send(app, `${CALC}?${query}`), { status: 400, code: "FORMAT_ERROR" });
  }
  await assertError(send(app, `${CALC}?amount=100&client_id=merchant-z`), {
    status: 404,
    code: "RESOURCE_UNKNOWN",
  });
  await assertError(send(app, `${CALC}?amount=100&client_id=toString`), {
    status: 404,
    code: "RESOURCE_UNKNOWN",
  });
});
