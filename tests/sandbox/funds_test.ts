import assert from "node:assert/strict";
import { ACCOUNTS } from "../../src/sandbox/data.ts";
import { FUNDS_TEST_ACCOUNTS } from "../../src/sandbox/test_users.ts";
import { NO_FUNDS_ACCOUNT, thousandths } from "../../src/sandbox/funds.ts";
import { assertError, sandboxWithClock, send, sendJson } from "./helpers.ts";

const [MAIN, , , MULTI] = ACCOUNTS;
const PATH = "/psd2/v1/funds-confirmations";

function check(account: Record<string, unknown>, currency: string, amount: string) {
  const { app } = sandboxWithClock();
  return sendJson(app, PATH, {
    method: "POST",
    body: { cardNumber: "4111111111111111", account, instructedAmount: { currency, amount } },
  });
}

async function available(account: Record<string, unknown>, currency: string, amount: string) {
  const res = await check(account, currency, amount);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.deepEqual(Object.keys(res.body), ["fundsAvailable"]);
  return res.body.fundsAvailable;
}

Deno.test("POST funds-confirmations answers from the account's expected balance", async () => {
  // The main account: 2391.25 GEL expected.
  assert.equal(await available({ iban: MAIN.iban }, "GEL", "125.50"), true);
  assert.equal(await available({ iban: MAIN.iban }, "GEL", "2391.25"), true);
  assert.equal(await available({ iban: MAIN.iban }, "GEL", "2391.251"), false);
  assert.equal(await available({ iban: MAIN.iban }, "GEL", "5000"), false);
  // No conversion: the GEL account holds no euros.
  assert.equal(await available({ iban: MAIN.iban }, "EUR", "1"), false);
  // The multicurrency account: 80.00 EUR expected.
  assert.equal(await available({ iban: MULTI.iban }, "EUR", "80"), true);
  assert.equal(await available({ iban: MULTI.iban }, "EUR", "80.01"), false);
});

Deno.test("POST funds-confirmations finds the account by IBAN, BBAN or other identification", async () => {
  assert.equal(await available({ bban: MAIN.iban.slice(4) }, "GEL", "10"), true);
  assert.equal(await available({ other: { identification: MAIN.resourceId } }, "GEL", "10"), true);
  assert.equal(await available({ iban: MULTI.iban, currency: "USD" }, "USD", "310.40"), true);
});

Deno.test("POST funds-confirmations: the test users' accounts have funds and have none", async () => {
  const [funded, empty] = FUNDS_TEST_ACCOUNTS;
  assert.equal(funded.psuId, "PSU-OK");
  assert.equal(empty.psuId, "PSU-NO-FUNDS");
  assert.equal(empty.iban, NO_FUNDS_ACCOUNT.iban);
  assert.equal(await available({ iban: funded.iban }, "GEL", "100"), true);
  assert.equal(await available({ iban: empty.iban }, "GEL", "0.01"), false);
});

Deno.test("POST funds-confirmations answers 400 RESOURCE_UNKNOWN for an account the bank does not hold", async () => {
  for (
    const account of [
      { iban: "DE89370400440532013000" },
      { pan: "4111111111111111" },
      { iban: MAIN.iban, currency: "USD" },
    ]
  ) {
    const res = await check(account, "GEL", "1");
    assert.equal(res.status, 400);
    assert.equal(res.body.tppMessages[0].code, "RESOURCE_UNKNOWN");
    assert.equal(res.body.tppMessages[0].path, "account");
  }
});

Deno.test("POST funds-confirmations answers 400 FORMAT_ERROR without an account or an amount", async () => {
  const { app } = sandboxWithClock();
  const post = (body: unknown) => send(app, PATH, { method: "POST", body });
  await assertError(post({ instructedAmount: { currency: "GEL", amount: "1" } }), {
    status: 400,
    code: "FORMAT_ERROR",
  });
  await assertError(post({ account: { iban: MAIN.iban } }), { status: 400, code: "FORMAT_ERROR" });
  await assertError(
    post({ account: { iban: MAIN.iban }, instructedAmount: { currency: "GEL", amount: 1 } }),
    { status: 400, code: "FORMAT_ERROR" },
  );
  await assertError(post("not json"), { status: 400, code: "FORMAT_ERROR" });
});

Deno.test("thousandths() reads the interface's amounts exactly", () => {
  assert.equal(thousandths("2391.25"), 2391250n);
  assert.equal(thousandths("0.001"), 1n);
  assert.equal(thousandths("-5"), -5000n);
  assert.equal(thousandths("12345678901234.999"), 12345678901234999n);
  assert.equal(thousandths("1.2345"), undefined);
  assert.equal(thousandths("1e3"), undefined);
  assert.equal(thousandths(12), undefined);
});
