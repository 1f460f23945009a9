import assert from "node:assert/strict";
import { statementText } from "../../src/sandbox/statement_text.ts";

const items = (...descriptions: string[]) => descriptions.map((description) => ({ description }));

Deno.test("statementText() joins item descriptions with commas", () => {
  assert.equal(statementText({ items: items("Phone", "Case") }), "Phone,Case");
});

Deno.test("statementText() keeps the first 25 symbols", () => {
  const text = statementText({ items: items("Wireless headphones", "Charging case") });
  assert.equal(text, "Wireless headphones,Charg");
  assert.equal(text.length, 25);
});

Deno.test("statementText() counts Georgian letters as one symbol each", () => {
  const text = statementText({ items: items("მობილური ტელეფონი", "დამტენი", "ჩანთა") });
  assert.equal(Array.from(text).length, 25);
  assert.equal(text, "მობილური ტელეფონი,დამტენი");
});

Deno.test("statementText() prefixes shop_order_id only when show_shop_order_id_on_extract is true", () => {
  const order = { items: items("Wireless headphones", "Charging case"), shop_order_id: "SO-77" };
  assert.equal(
    statementText({ ...order, show_shop_order_id_on_extract: true }),
    "SO-77 Wireless headphones,Charg",
  );
  assert.equal(
    statementText({ ...order, show_shop_order_id_on_extract: false }),
    "Wireless headphones,Charg",
  );
  assert.equal(statementText(order), "Wireless headphones,Charg");
  assert.equal(
    statementText({ items: items("Phone"), show_shop_order_id_on_extract: true }),
    "Phone",
  );
});

Deno.test("statementText() skips items without a string description", () => {
  assert.equal(statementText({ items: [{ amount: "1" }, "x", { description: "Pen" }] }), "Pen");
  assert.equal(statementText({ items: "nope" }), "");
  assert.equal(statementText({}), "");
});
