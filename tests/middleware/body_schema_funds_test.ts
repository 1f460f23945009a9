/**
 * The body_schema check on the confirmation of funds (`POST /v1/funds-confirmations`): a valid
 * body reaches the bank byte for byte, an invalid one is 400 FORMAT_ERROR naming the field.
 */
import assert from "node:assert/strict";
import { assertForwarded, assertRejected, policy, rig } from "../support/hardening.ts";
import { fundsBody, fundsHeaders } from "../support/funds.ts";

const PATH = "/v1/funds-confirmations";

function post(body: unknown) {
  return {
    method: "POST",
    headers: fundsHeaders(),
    body: typeof body === "string" ? body : JSON.stringify(body),
  };
}

Deno.test("bodySchema() forwards a valid confirmation of funds byte for byte", async () => {
  await using t = await rig(policy());
  const text = JSON.stringify(fundsBody("125.50"), null, 2);
  assertForwarded(await t.call(PATH, post(text)), t.upstream);
  assert.equal(t.upstream.received[0].body, text);
  assert.equal(t.upstream.received[0].path, "/psd2/v1/funds-confirmations");
});

Deno.test("bodySchema() refuses a confirmation of funds that breaks the official schema", async () => {
  const body = fundsBody();
  const cases: [string, unknown, string, RegExp][] = [
    ["no account", { ...body, account: undefined }, "account", /is required/],
    ["no amount", { ...body, instructedAmount: undefined }, "instructedAmount", /is required/],
    [
      "two identifiers",
      fundsBody("1", { iban: "GE42SB0000000101904917", msisdn: "+995" }),
      "account",
      /exactly one/,
    ],
    [
      "bad IBAN",
      fundsBody("1", { iban: "GE00SB0000000101904917" }),
      "account.iban",
      /check digits/,
    ],
    [
      "amount as a number",
      { ...body, instructedAmount: { currency: "GEL", amount: 12 } },
      "instructedAmount.amount",
      /string/,
    ],
    ["zero amount", fundsBody("0"), "instructedAmount.amount", /greater than zero/],
    ["long card number", { ...body, cardNumber: "4".repeat(36) }, "cardNumber", /35/],
    ["long payee", { ...body, payee: "p".repeat(71) }, "payee", /70/],
    ["unknown field", { ...body, psuId: "PSU-OK" }, "psuId", /not allowed|unknown|not expected/i],
    ["an array", [body], "body", /object/],
  ];
  await using t = await rig(policy());
  for (const [name, bad, path, text] of cases) {
    const outcome = await t.call(PATH, post(bad));
    assert.equal(outcome.status, 400, `${name}: ${JSON.stringify(outcome.body)}`);
    assert.equal(outcome.code, "FORMAT_ERROR", name);
    assert.equal(outcome.path, path, name);
    assert.match(outcome.text ?? "", text, name);
  }
  assert.equal(t.upstream.received.length, 0, "a rejected body reached the bank");
});

Deno.test("bodySchema() refuses a confirmation of funds without a body", async () => {
  await using t = await rig(policy());
  const outcome = await t.call(PATH, { method: "POST", headers: fundsHeaders() });
  assertRejected(outcome, { status: 400, code: "FORMAT_ERROR" }, t.upstream);
});
