import assert from "node:assert/strict";
import { fundsConfirmation } from "../../../src/bodies/funds_confirmation.ts";
import { parseBody } from "../../../src/bodies/issues.ts";
import type { BodyOptions } from "../../../src/bodies/text.ts";
import { GatewayError } from "../../../src/psd2/errors.ts";
import { fundsBody } from "../../support/funds.ts";
import { IBAN } from "../../support/requests.ts";

const OPTIONS: BodyOptions = {
  unknown: "reject",
  charset: "interface",
  maxBulk: 10,
  allowHttp: false,
};
const schema = fundsConfirmation(OPTIONS);

/** The problem the schema finds in the body (path and text), or undefined for a valid one. */
function problem(body: unknown, options = OPTIONS) {
  try {
    parseBody(options === OPTIONS ? schema : fundsConfirmation(options), body);
    return undefined;
  } catch (error) {
    assert.ok(error instanceof GatewayError);
    assert.equal(error.status, 400);
    assert.equal(error.code, "FORMAT_ERROR");
    return { path: error.path, text: error.message };
  }
}

/** The body without one field. */
function without(field: string) {
  const body = fundsBody();
  delete body[field];
  return body;
}

Deno.test("fundsConfirmation() accepts the official example's shape and the optional fields", () => {
  // The official example with an IBAN whose check digits are valid (its own fails mod-97).
  assert.equal(
    problem({
      cardNumber: "12345678901234",
      account: { iban: IBAN.debtor },
      instructedAmount: { currency: "EUR", amount: "123" },
    }),
    undefined,
  );
  assert.equal(problem(fundsBody()), undefined);
  assert.equal(problem(without("cardNumber")), undefined);
  assert.equal(problem(without("payee")), undefined);
  // Any account reference: a card account by its masked PAN, another by a proprietary id.
  assert.equal(problem(fundsBody("1", { maskedPan: "411111******1111" })), undefined);
  assert.equal(problem(fundsBody("1", { other: { identification: "acc-77" } })), undefined);
});

Deno.test("fundsConfirmation() requires account and instructedAmount", () => {
  assert.equal(problem(without("account"))?.path, "account");
  assert.equal(problem(without("instructedAmount"))?.path, "instructedAmount");
  const amount = problem({ ...fundsBody(), instructedAmount: { currency: "GEL" } });
  assert.equal(amount?.path, "instructedAmount.amount");
});

Deno.test("fundsConfirmation() holds cardNumber to 35 characters and payee to Max70Text", () => {
  assert.equal(problem({ ...fundsBody(), cardNumber: "4".repeat(35) }), undefined);
  assert.equal(problem({ ...fundsBody(), cardNumber: "4".repeat(36) })?.path, "cardNumber");
  assert.equal(problem({ ...fundsBody(), cardNumber: 4111111111111111 })?.path, "cardNumber");
  assert.equal(problem({ ...fundsBody(), payee: "p".repeat(70) }), undefined);
  assert.equal(problem({ ...fundsBody(), payee: "p".repeat(71) })?.path, "payee");
  const charset = problem({ ...fundsBody(), payee: "Books & Co" });
  assert.equal(charset?.path, "payee");
  assert.match(charset?.text ?? "", /interface character set/);
  assert.equal(
    problem({ ...fundsBody(), payee: "Books & Co" }, { ...OPTIONS, charset: "latin" }),
    undefined,
  );
});

Deno.test("fundsConfirmation() checks the account reference and the amount", () => {
  const twice = problem(fundsBody("1", { iban: IBAN.debtor, bban: "370400440532013000" }));
  assert.equal(twice?.path, "account");
  assert.match(twice?.text ?? "", /exactly one of/);
  assert.equal(problem(fundsBody("1", { iban: "DE00370400440532013000" }))?.path, "account.iban");
  assert.equal(problem(fundsBody("12.5")), undefined);
  assert.equal(problem(fundsBody("12,50"))?.path, "instructedAmount.amount");
  // A funds check for nothing or for a negative amount has no answer: greater than zero.
  for (const amount of ["0", "0.00", "-1"]) {
    const refused = problem(fundsBody(amount));
    assert.equal(refused?.path, "instructedAmount.amount", amount);
    assert.match(refused?.text ?? "", /greater than zero/);
  }
  const currency = problem({ ...fundsBody(), instructedAmount: { currency: "XYZ", amount: "1" } });
  assert.equal(currency?.path, "instructedAmount.currency");
});

Deno.test("fundsConfirmation() rejects unknown fields, or lets them through when the policy says", () => {
  const extra = { ...fundsBody(), merchantCategoryCode: "5942" };
  assert.equal(problem(extra)?.path, "merchantCategoryCode");
  assert.equal(problem(extra, { ...OPTIONS, unknown: "forward" }), undefined);
});
