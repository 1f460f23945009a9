import assert from "node:assert/strict";
import type { z } from "zod";
import {
  bulkPayment,
  periodicPayment,
  singlePayment,
  standingOrder,
} from "../../../src/bodies/payment.ts";
import { parseBody } from "../../../src/bodies/issues.ts";
import type { BodyOptions } from "../../../src/bodies/text.ts";
import { GatewayError } from "../../../src/psd2/errors.ts";
import { dayFromToday, IBAN, singlePayment as validPayment } from "../../support/requests.ts";

const OPTIONS: BodyOptions = {
  unknown: "reject",
  charset: "interface",
  maxBulk: 10,
  allowHttp: false,
};
const today = () => dayFromToday(0);

type Json = Record<string, unknown>;

/** The first problem of `body` under `schema` as path, text and code, or undefined. */
function problem(schema: z.ZodType, body: unknown) {
  try {
    parseBody(schema, body);
    return undefined;
  } catch (error) {
    assert.ok(error instanceof GatewayError);
    return { status: error.status, code: error.code, path: error.path, text: error.message };
  }
}

/** The optional Berlin Group fields of one payment, each with a valid value. */
const STANDARD_FIELDS: Json = {
  instructionIdentification: "INSTR-0001",
  debtorName: "Nino Beridze",
  ultimateDebtor: "Beridze Family Trust",
  ultimateCreditor: "Merchant Holding",
  creditorId: "DE98ZZZ09999999999",
  purposeCode: "GDDS",
  chargeBearer: "SLEV",
  remittanceInformationUnstructuredArray: ["Invoice 1", "Invoice 2"],
  remittanceInformationStructured: {
    reference: "R".repeat(140),
    referenceType: "SCOR",
    referenceIssuer: "Merchant",
  },
  remittanceInformationStructuredArray: [{ reference: "RF18539007547034" }],
};

/** A bad value per field: the path and the phrase the error text holds. */
const BAD_FIELDS: [string, unknown, string, RegExp][] = [
  ["instructionIdentification", "i".repeat(36), "instructionIdentification", /at most 35/],
  ["debtorName", "d".repeat(71), "debtorName", /at most 70/],
  ["ultimateDebtor", "u".repeat(71), "ultimateDebtor", /at most 70/],
  ["ultimateCreditor", "u".repeat(71), "ultimateCreditor", /at most 70/],
  ["creditorId", "c".repeat(36), "creditorId", /at most 35/],
  ["purposeCode", "gdds", "purposeCode", /purpose code of 4 capital letters or digits/],
  ["purposeCode", "GOODS", "purposeCode", /purpose code/],
  ["chargeBearer", "OUR", "chargeBearer", /one of "DEBT", "CRED", "SHAR", "SLEV"/],
  [
    "remittanceInformationUnstructuredArray",
    ["ok", "r".repeat(141)],
    "remittanceInformationUnstructuredArray[1]",
    /at most 140/,
  ],
  ["remittanceInformationUnstructuredArray", [], "remittanceInformationUnstructuredArray", /empty/],
  [
    "remittanceInformationStructured",
    { referenceType: "SCOR" },
    "remittanceInformationStructured.reference",
    /is required/,
  ],
  [
    "remittanceInformationStructured",
    { reference: "R".repeat(141) },
    "remittanceInformationStructured.reference",
    /at most 140/,
  ],
  [
    "remittanceInformationStructuredArray",
    [{ reference: "R".repeat(36) }],
    "remittanceInformationStructuredArray[0].reference",
    /at most 35/,
  ],
  [
    "remittanceInformationStructuredArray",
    [{ reference: "R", referenceIssuer: "I".repeat(36) }],
    "remittanceInformationStructuredArray[0].referenceIssuer",
    /at most 35/,
  ],
];

Deno.test("singlePayment() accepts the optional fields of the Berlin Group standard", () => {
  const body = { ...validPayment(), ...STANDARD_FIELDS, requestedExecutionDate: dayFromToday(2) };
  assert.equal(problem(singlePayment(OPTIONS, today), body), undefined);
  // Every ISO 20022 purpose code has this form, digits included.
  for (const purposeCode of ["CASH", "B112", "BR12"]) {
    assert.equal(problem(singlePayment(OPTIONS, today), { ...body, purposeCode }), undefined);
  }
});

Deno.test("singlePayment() checks each optional field's format", () => {
  const schema = singlePayment(OPTIONS, today);
  for (const [field, value, path, text] of BAD_FIELDS) {
    const found = problem(schema, { ...validPayment(), [field]: value });
    assert.equal(found?.path, path, `${field}: ${JSON.stringify(found)}`);
    assert.equal(found?.code, "FORMAT_ERROR", field);
    assert.match(found?.text ?? "", text, field);
  }
});

Deno.test("singlePayment() wants requestedExecutionDate as a date not in the past", () => {
  const schema = singlePayment(OPTIONS, today);
  const past = problem(schema, { ...validPayment(), requestedExecutionDate: dayFromToday(-2) });
  assert.equal(past?.code, "EXECUTION_DATE_INVALID");
  assert.equal(past?.path, "requestedExecutionDate");
  const wrong = problem(schema, { ...validPayment(), requestedExecutionDate: "31.12.2030" });
  assert.equal(wrong?.code, "FORMAT_ERROR");
  assert.match(wrong?.text ?? "", /must be a date like 2025-12-31/);
});

Deno.test("bulkPayment() accepts debtorName, requestedExecutionTime and the entries' standard fields", () => {
  const { debtorAccount: _, ...entry } = validPayment();
  const body = {
    batchBookingPreferred: false,
    debtorAccount: { iban: IBAN.debtor },
    debtorName: "Nino Beridze",
    requestedExecutionDate: dayFromToday(1),
    requestedExecutionTime: "2030-06-01T09:30:00.250+04:00",
    payments: [{ ...entry, ...STANDARD_FIELDS }],
  };
  const schema = bulkPayment(OPTIONS, today);
  assert.equal(problem(schema, body), undefined);
  for (const time of ["2030-06-01T09:30:00Z", "2030-06-01T09:30:00-00:00"]) {
    assert.equal(problem(schema, { ...body, requestedExecutionTime: time }), undefined, time);
  }
  for (const time of ["2030-06-01", "2030-06-01T09:30:00", "2030-02-30T09:30:00Z", "tomorrow"]) {
    const found = problem(schema, { ...body, requestedExecutionTime: time });
    assert.equal(found?.path, "requestedExecutionTime", time);
    assert.match(found?.text ?? "", /date-time with a time zone/, time);
  }
  const name = problem(schema, { ...body, debtorName: "n".repeat(71) });
  assert.equal(name?.path, "debtorName");
  const field = problem(schema, { ...body, payments: [{ ...entry, chargeBearer: "ALL" }] });
  assert.equal(field?.path, "payments[0].chargeBearer");
  // An entry carries no execution date of its own.
  const dated = problem(schema, {
    ...body,
    payments: [{ ...entry, requestedExecutionDate: dayFromToday(1) }],
  });
  assert.equal(dated?.path, "payments[0].requestedExecutionDate");
});

Deno.test("periodicPayment() takes monthsOfExecution with MonthlyVariable only, 1 to 11 distinct months", () => {
  const schema = periodicPayment(OPTIONS, today);
  const periodic = {
    ...validPayment(),
    ...STANDARD_FIELDS,
    startDate: dayFromToday(1),
    frequency: "MonthlyVariable",
    monthsOfExecution: ["1", "4", "10"],
  };
  assert.equal(problem(schema, periodic), undefined);
  const cases: [Json, RegExp][] = [
    [{ monthsOfExecution: ["1", "13"] }, /must be one of "1", "2"/],
    [{ monthsOfExecution: [1, 4] }, /must be one of/],
    [{ monthsOfExecution: ["01"] }, /must be one of/],
    [
      { monthsOfExecution: ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12"] },
      /at most 11/,
    ],
    [{ monthsOfExecution: ["4", "4"] }, /must not repeat a month/],
    [{ monthsOfExecution: undefined }, /is required when frequency is "MonthlyVariable"/],
    [{ frequency: "Monthly" }, /must only be sent when frequency is "MonthlyVariable"/],
  ];
  for (const [change, text] of cases) {
    const found = problem(schema, { ...periodic, ...change });
    assert.match(found?.path ?? "", /^monthsOfExecution/, JSON.stringify(change));
    assert.match(found?.text ?? "", text, JSON.stringify(change));
  }
  // A periodic payment's dates are its schedule: requestedExecutionDate is not one of its fields.
  const dated = problem(schema, { ...periodic, requestedExecutionDate: dayFromToday(1) });
  assert.equal(dated?.path, "requestedExecutionDate");
});

Deno.test("standingOrder() is the schedule alone, with the same rules", () => {
  const schema = standingOrder(OPTIONS, today);
  assert.equal(
    problem(schema, { startDate: dayFromToday(1), frequency: "Monthly", dayOfExecution: "31" }),
    undefined,
  );
  assert.equal(problem(schema, { frequency: "Monthly" })?.path, "startDate");
  assert.equal(
    problem(schema, { startDate: dayFromToday(1), frequency: "Weekly", creditorName: "x" })?.path,
    "creditorName",
  );
  assert.equal(
    problem(schema, { startDate: dayFromToday(5), endDate: dayFromToday(2), frequency: "Daily" })
      ?.code,
    "EXECUTION_DATE_INVALID",
  );
});
