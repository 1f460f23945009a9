/**
 * The confirmation of funds against the official Berlin Group OpenAPI file's schemas
 * (`official_funds_schemas.ts`): the sandbox bank's answers through the gateway, the gateway's own
 * refusals, the published contract of the operation, and which request bodies the gateway lets
 * through: every body it forwards is the file's `confirmationOfFunds`, and every body of the file
 * it refuses breaks one of the gateway's documented rules beyond the file.
 */
import assert from "node:assert/strict";
import Ajv2020 from "ajv/dist/2020.js";
import { startBank } from "../e2e/bank.ts";
import { call } from "../e2e/flow.ts";
import { policy, rig } from "../support/hardening.ts";
import { fundsBody, fundsHeaders } from "../support/funds.ts";
import { IBAN } from "../support/requests.ts";
import { Contract } from "./contract.ts";
import { ERROR_NG } from "./official_schemas.ts";
import { CONFIRMATION_OF_FUNDS, CONFIRMATION_OF_FUNDS_200 } from "./official_funds_schemas.ts";
import { STANDARD_CODES } from "../../src/psd2/errors.ts";
import { FUNDS_TEST_ACCOUNTS } from "../../src/sandbox/test_users.ts";

// deno-lint-ignore no-explicit-any
const ajv = new (Ajv2020 as any)({ allErrors: true, strict: false });
const request = ajv.compile(CONFIRMATION_OF_FUNDS);
const answer = ajv.compile(CONFIRMATION_OF_FUNDS_200);
const errorBody = ajv.compile(ERROR_NG);
const PATH = "/v1/funds-confirmations";
const [FUNDED, EMPTY] = FUNDS_TEST_ACCOUNTS;

/** Asserts an official error body whose first message has the standard's code for the status. */
// deno-lint-ignore no-explicit-any
function assertOfficialError(status: number, body: any, code: string) {
  assert.ok(errorBody(body), JSON.stringify(errorBody.errors));
  assert.equal(body.tppMessages[0].code, code);
  const codes: readonly string[] = STANDARD_CODES[status as keyof typeof STANDARD_CODES];
  assert.ok(codes.includes(code), `${status} ${code} is not the standard's`);
}

Deno.test("the sandbox's confirmation of funds answers, through the gateway, are the official file's", async () => {
  await using bank = await startBank();
  const check = (iban: string, amount: string) =>
    call(bank.gateway, "POST", PATH, { body: fundsBody(amount, { iban }) });
  const funded = await check(FUNDED.iban, "100.00");
  assert.equal(funded.status, 200, JSON.stringify(funded.body));
  assert.ok(answer(funded.body), JSON.stringify(answer.errors));
  assert.deepEqual(funded.body, { fundsAvailable: true });
  const empty = await check(EMPTY.iban, "0.01");
  assert.equal(empty.status, 200, JSON.stringify(empty.body));
  assert.ok(answer(empty.body), JSON.stringify(answer.errors));
  assert.deepEqual(empty.body, { fundsAvailable: false });
  // An account the bank does not hold, addressed in the payload: 400 RESOURCE_UNKNOWN.
  const unknown = await check(IBAN.debtor, "1");
  assert.equal(unknown.status, 400);
  assertOfficialError(400, unknown.body, "RESOURCE_UNKNOWN");
  assert.equal(unknown.body.tppMessages[0].path, "account");
});

Deno.test("the gateway's refusals of a confirmation of funds are the official error body", async () => {
  await using t = await rig(
    policy({}, { groups: { piis: { consent_id: { required: true } } } }),
  );
  const post = (body: unknown, headers: Record<string, string> = { "consent-id": "c-1" }) =>
    t.call(PATH, { method: "POST", headers: fundsHeaders(headers), body: JSON.stringify(body) });
  const bad = await post({ ...fundsBody(), instructedAmount: { currency: "GEL", amount: "1,5" } });
  assert.equal(bad.status, 400);
  assertOfficialError(400, bad.body, "FORMAT_ERROR");
  const noConsent = await post(fundsBody(), {});
  assert.equal(noConsent.status, 400);
  assertOfficialError(400, noConsent.body, "FORMAT_ERROR");
  assert.equal(t.upstream.received.length, 0);

  await using off = await rig(policy({}, { groups: { piis: { service: { offered: false } } } }));
  const refused = await off.call(PATH, {
    method: "POST",
    headers: fundsHeaders(),
    body: JSON.stringify(fundsBody()),
  });
  assert.equal(refused.status, 405);
  assertOfficialError(405, refused.body, "SERVICE_INVALID");
});

Deno.test("/openapi.json describes the confirmation of funds as the official file does", async () => {
  await using t = await rig(policy());
  const contract = await Contract.of(t.gateway);
  const entry = contract.document.paths[PATH].post;
  assert.equal(entry.operationId, "checkAvailabilityOfFunds");
  const ok = contract.resolve(entry.responses["200"]).content["application/json"].schema;
  // The same answers pass and fail both: the file's own example sends "true" as a string, which
  // its schema (a boolean) refuses.
  for (
    const body of [{ fundsAvailable: true }, { fundsAvailable: false }, {}, {
      fundsAvailable: "true",
    }]
  ) {
    assert.equal(contract.problems(ok, body).length === 0, answer(body), JSON.stringify(body));
  }
  const content = entry.requestBody.content["application/json"];
  for (const [name, example] of Object.entries(content.examples ?? {})) {
    const value = (example as { value: unknown }).value;
    assert.ok(request(value), `${name}: ${JSON.stringify(request.errors)}`);
    assert.deepEqual(contract.problems(content.schema, value), [], name);
  }
  assert.ok(Object.keys(content.examples ?? {}).length > 0, "a request example");
});

/** A body, whether the official file accepts it, and the gateway's rule beyond it that refuses it. */
const BODIES: [string, Record<string, unknown>, { official: boolean; beyond?: string }][] = [
  ["all fields", fundsBody(), { official: true }],
  ["the file's example fields", {
    cardNumber: "12345678901234",
    account: { iban: IBAN.debtor },
    instructedAmount: { currency: "EUR", amount: "123" },
  }, { official: true }],
  ["a masked PAN", fundsBody("1", { maskedPan: "123456xxxxxx1234" }), { official: true }],
  ["a BBAN and a currency", fundsBody("1", { bban: "BARC12345612345678", currency: "EUR" }), {
    official: true,
  }],
  ["no account", { ...fundsBody(), account: undefined }, { official: false }],
  ["no amount", { ...fundsBody(), instructedAmount: undefined }, { official: false }],
  ["a 36-character card number", { ...fundsBody(), cardNumber: "4".repeat(36) }, {
    official: false,
  }],
  ["a 71-character payee", { ...fundsBody(), payee: "p".repeat(71) }, { official: false }],
  ["an amount as a number", { ...fundsBody(), instructedAmount: { currency: "GEL", amount: 1 } }, {
    official: false,
  }],
  ["the file's example IBAN", fundsBody("1", { iban: "DE23100120020123456789" }), {
    official: true,
    beyond: "ISO 13616 check digits",
  }],
  ["no identifier", fundsBody("1", { currency: "EUR" }), {
    official: true,
    beyond: "exactly one identifier",
  }],
  ["two identifiers", fundsBody("1", { iban: IBAN.debtor, msisdn: "+995 555 123456" }), {
    official: true,
    beyond: "exactly one identifier",
  }],
  ["a zero amount", fundsBody("0"), { official: true, beyond: "an amount greater than zero" }],
  ["a negative amount", fundsBody("-5"), { official: true, beyond: "an amount greater than zero" }],
  ["an unknown currency", { ...fundsBody(), instructedAmount: { currency: "XYZ", amount: "1" } }, {
    official: true,
    beyond: "ISO 4217 currencies",
  }],
  ["a payee with &", { ...fundsBody(), payee: "Books & Co" }, {
    official: true,
    beyond: "the interface character set (interface_charset)",
  }],
  ["an unknown field", { ...fundsBody(), merchantCategoryCode: "5942" }, {
    official: true,
    beyond: "unknown fields (unknown_fields: forward lets them through)",
  }],
];

Deno.test("the gateway forwards only the file's confirmationOfFunds, and refuses of it only what its rules name", async () => {
  await using t = await rig(policy());
  let forwarded = 0;
  for (const [name, body, expected] of BODIES) {
    assert.equal(request(body), expected.official, `${name}: the file's verdict`);
    const outcome = await t.call(PATH, {
      method: "POST",
      headers: fundsHeaders(),
      body: JSON.stringify(body),
    });
    const passes = expected.official && expected.beyond === undefined;
    assert.equal(outcome.status, passes ? 200 : 400, `${name}: ${JSON.stringify(outcome.body)}`);
    if (passes) {
      forwarded++;
      assert.ok(request(JSON.parse(t.upstream.received.at(-1)!.body)), name);
    } else {
      assert.equal(outcome.code, "FORMAT_ERROR", `${name}: ${expected.beyond ?? "the file"}`);
    }
  }
  assert.equal(t.upstream.received.length, forwarded);
});
