import { TEST_SECTIONS } from "../support/sections.ts";
import assert from "node:assert/strict";
import { Hono } from "hono";
import { assertForwarded, assertRejected, policy, type Rig, rig } from "../support/hardening.ts";
import type { LevelInput } from "../support/policies.ts";
import {
  checkoutOrderBody,
  consentBody,
  dayFromToday,
  IBAN,
  initiationHeaders,
  PAIN_001,
  REQUEST_ID,
  singlePayment,
} from "../support/requests.ts";
import {
  FORM_TYPE,
  periodicForm,
  periodicParts,
  standingOrderPart,
} from "../support/periodic_form.ts";
import { bodySchema } from "../../middleware/body_schema.ts";
import { operation } from "../../src/psd2/catalogue.ts";
import type { GatewayEnv } from "../../src/core/check.ts";
import { failureAnswer, toResponse } from "../../src/core/answer.ts";
import { defaultServices } from "../../src/policy/services.ts";
import { memoryLogger } from "../../src/lib/log.ts";

type Json = Record<string, unknown>;

/** A deep copy of `body` changed by `change`. */
function changed(body: Json, change: (copy: Json) => void): Json {
  const copy = structuredClone(body);
  change(copy);
  return copy;
}

function post(body: unknown, headers = initiationHeaders()) {
  return {
    method: "POST",
    headers,
    body: typeof body === "string" ? body : JSON.stringify(body),
  };
}

interface Case {
  name: string;
  body: unknown;
  path: string;
  text: RegExp;
  code?: string;
}

async function assertCases(path: string, cases: Case[], extra: LevelInput = {}) {
  await using t = await rig(policy(extra));
  for (const c of cases) {
    const outcome = await t.call(path, post(c.body));
    assert.equal(outcome.status, 400, `${c.name}: ${JSON.stringify(outcome.body)}`);
    assert.equal(outcome.code, c.code ?? "FORMAT_ERROR", c.name);
    assert.equal(outcome.path, c.path, c.name);
    assert.match(outcome.text ?? "", c.text, c.name);
  }
  assert.equal(t.upstream.received.length, 0, "a rejected body reached the upstream");
}

const payment = singlePayment();

Deno.test("bodySchema() forwards a valid single payment byte for byte", async () => {
  await using t = await rig(policy());
  const text = JSON.stringify(payment, null, 2);
  assertForwarded(await t.call("/v1/payments/domestic", post(text)), t.upstream);
  assert.equal(t.upstream.received[0].body, text);
});

Deno.test("bodySchema() forwards the standard's optional fields of payments and consents", async () => {
  await using t = await rig(policy());
  const { debtorAccount: _, ...entry } = payment;
  const standard = {
    instructionIdentification: "INSTR-1",
    debtorName: "Nino Beridze",
    ultimateDebtor: "Beridze Trust",
    ultimateCreditor: "Merchant Holding",
    creditorId: "DE98ZZZ09999999999",
    purposeCode: "GDDS",
    chargeBearer: "SHAR",
    remittanceInformationUnstructuredArray: ["Invoice 1"],
    remittanceInformationStructured: { reference: "RF18539007547034", referenceType: "SCOR" },
    remittanceInformationStructuredArray: [{ reference: "RF18539007547034" }],
  };
  const calls: [string, unknown][] = [
    ["/v1/payments/domestic", {
      ...payment,
      ...standard,
      requestedExecutionDate: dayFromToday(1),
    }],
    ["/v1/bulk-payments/domestic", {
      debtorAccount: { iban: IBAN.debtor },
      debtorName: "Nino Beridze",
      batchBookingPreferred: true,
      requestedExecutionTime: "2030-01-31T10:00:00+04:00",
      payments: [{ ...entry, ...standard }],
    }],
    ["/v1/periodic-payments/domestic", {
      ...payment,
      ...standard,
      startDate: dayFromToday(1),
      frequency: "MonthlyVariable",
      monthsOfExecution: ["3", "9"],
    }],
    ["/v1/consents", {
      ...consentBody(),
      access: {
        accounts: [{ iban: IBAN.debtor }],
        additionalInformation: { ownerName: [{ iban: IBAN.debtor }], trustedBeneficiaries: [] },
      },
    }],
    ["/v1/consents", {
      ...consentBody(),
      access: { availableAccounts: "allAccounts", restrictedTo: ["CACC"] },
    }],
  ];
  for (const [i, [path, body]] of calls.entries()) {
    assertForwarded(await t.call(path, post(body)), t.upstream, i + 1);
  }
});

Deno.test("bodySchema() enforces the payment initiation field table", async () => {
  await assertCases("/v1/payments/domestic", [
    {
      name: "creditorName missing",
      body: changed(payment, (b) => delete b.creditorName),
      path: "creditorName",
      text: /^Field "creditorName" is required$/,
    },
    {
      name: "creditorName 71",
      body: { ...payment, creditorName: "a".repeat(71) },
      path: "creditorName",
      text: /at most 70 characters/,
    },
    {
      name: "endToEndIdentification 36",
      body: { ...payment, endToEndIdentification: "e".repeat(36) },
      path: "endToEndIdentification",
      text: /at most 35 characters/,
    },
    {
      name: "creditorAgentName 141",
      body: { ...payment, creditorAgentName: "n".repeat(141) },
      path: "creditorAgentName",
      text: /at most 140 characters/,
    },
    {
      name: "remittance 141",
      body: { ...payment, remittanceInformationUnstructured: "r".repeat(141) },
      path: "remittanceInformationUnstructured",
      text: /at most 140 characters/,
    },
    {
      name: "creditorAgent",
      body: { ...payment, creditorAgent: "AAAADE1B" },
      path: "creditorAgent",
      text: /must be a BIC/,
    },
    {
      name: "creditorAgent O in location",
      body: { ...payment, creditorAgent: "AAAADEBO" },
      path: "creditorAgent",
      text: /must be a BIC/,
    },
    {
      name: "debtorAccount missing",
      body: changed(payment, (b) => delete b.debtorAccount),
      path: "debtorAccount",
      text: /is required/,
    },
    {
      name: "creditorAccount missing",
      body: changed(payment, (b) => delete b.creditorAccount),
      path: "creditorAccount",
      text: /is required/,
    },
    {
      name: "instructedAmount missing",
      body: changed(payment, (b) => delete b.instructedAmount),
      path: "instructedAmount",
      text: /is required/,
    },
    {
      name: "not an object",
      body: [payment],
      path: "body",
      text: /^The request body must be an object$/,
    },
  ]);
});

Deno.test("bodySchema() checks account references: one identifier, IBAN pattern and mod-97", async () => {
  await assertCases("/v1/payments/domestic", [
    {
      name: "bad check digits",
      body: { ...payment, creditorAccount: { iban: "DE89370400440532013001" } },
      path: "creditorAccount.iban",
      text: /valid check digits/,
    },
    {
      name: "spaces",
      body: { ...payment, creditorAccount: { iban: "DE89 3704 0044 0532 0130 00" } },
      path: "creditorAccount.iban",
      text: /electronic form/,
    },
    {
      name: "two identifiers",
      body: { ...payment, debtorAccount: { iban: IBAN.debtor, bban: "370400440532013000" } },
      path: "debtorAccount",
      text: /exactly one of iban, bban, pan, maskedPan, msisdn, other \(got iban, bban\)/,
    },
    {
      name: "no identifier",
      body: { ...payment, debtorAccount: { currency: "EUR" } },
      path: "debtorAccount",
      text: /exactly one of/,
    },
    {
      name: "account currency",
      body: { ...payment, debtorAccount: { iban: IBAN.debtor, currency: "EURO" } },
      path: "debtorAccount.currency",
      text: /ISO 4217/,
    },
  ]);
});

Deno.test("bodySchema() checks amounts as decimal strings in ISO 4217 currencies", async () => {
  const amount = (value: unknown, currency = "EUR") => ({
    ...payment,
    instructedAmount: { currency, amount: value },
  });
  await assertCases("/v1/payments/domestic", [
    {
      name: "comma",
      body: amount("12,50"),
      path: "instructedAmount.amount",
      text: /decimal number written as a string/,
    },
    {
      name: "number",
      body: amount(12.5),
      path: "instructedAmount.amount",
      text: /must be a string/,
    },
    {
      name: "four decimals",
      body: amount("1.2345"),
      path: "instructedAmount.amount",
      text: /decimal number/,
    },
    {
      name: "zero",
      body: amount("0.00"),
      path: "instructedAmount.amount",
      text: /greater than zero/,
    },
    {
      name: "negative",
      body: amount("-5"),
      path: "instructedAmount.amount",
      text: /greater than zero/,
    },
    {
      name: "unknown currency",
      body: amount("5", "ABC"),
      path: "instructedAmount.currency",
      text: /ISO 4217/,
    },
  ]);
});

Deno.test("bodySchema() holds free text to the interface character set when the policy says", async () => {
  await assertCases("/v1/payments/domestic", [
    {
      name: "umlaut",
      body: { ...payment, creditorName: "Müller" },
      path: "creditorName",
      text: /interface character set/,
    },
    {
      name: "ampersand",
      body: { ...payment, remittanceInformationUnstructured: "A & B" },
      path: "remittanceInformationUnstructured",
      text: /interface character set/,
    },
  ]);
  await using t = await rig(policy({ body_schema: { interface_charset: false } }));
  assertForwarded(
    await t.call("/v1/payments/domestic", post({ ...payment, creditorName: "Müller & Söhne" })),
    t.upstream,
  );
});

Deno.test("bodySchema() widens free text to a Latin set or printable Unicode when the policy says", async () => {
  const names = {
    georgian: "თბილისის ენერგია",
    ampersand: "Smith & Co",
    hash: "Order #123",
    umlaut: "Müller GmbH",
    at: "pay@shop",
  };
  const send = (t: Rig, field: string, value: string) =>
    t.call(
      "/v1/payments/domestic",
      post({ ...payment, [field]: value }),
    );
  {
    await using t = await rig(policy());
    for (const value of Object.values(names)) {
      assert.equal((await send(t, "creditorName", value)).status, 400, `default: ${value}`);
    }
  }
  {
    await using t = await rig(policy({ body_schema: { interface_charset: "latin" } }));
    let forwarded = 0;
    for (const [name, value] of Object.entries(names)) {
      const outcome = await send(t, "creditorName", value);
      if (name === "georgian") {
        assert.equal(outcome.status, 400);
        assert.match(outcome.text ?? "", /Latin letters \(accented too\)/);
      } else assertForwarded(outcome, t.upstream, ++forwarded);
    }
  }
  await using t = await rig(policy({ body_schema: { interface_charset: "unicode" } }));
  let forwarded = 0;
  for (const value of Object.values(names)) {
    assertForwarded(await send(t, "creditorName", value), t.upstream, ++forwarded);
  }
  for (const hidden of ["Evil\u202eoC", "zero\u200bwidth", "private\ue000use"]) {
    const outcome = await send(t, "remittanceInformationUnstructured", hidden);
    assert.equal(outcome.status, 400, JSON.stringify(hidden));
    assert.equal(outcome.path, "remittanceInformationUnstructured");
    assert.match(outcome.text ?? "", /printable text/);
  }
});

Deno.test("bodySchema() rejects unknown fields, or forwards them when the policy says", async () => {
  await assertCases("/v1/payments/domestic", [
    {
      name: "top level",
      body: { ...payment, serviceLevel: "SEPA" },
      path: "serviceLevel",
      text: /is not a field of this body/,
    },
    {
      name: "nested",
      body: { ...payment, creditorAccount: { iban: IBAN.creditor, note: "x" } },
      path: "creditorAccount.note",
      text: /is not a field/,
    },
  ]);
  await using t = await rig(policy({ body_schema: { unknown_fields: "forward" } }));
  assertForwarded(
    await t.call("/v1/payments/domestic", post({ ...payment, serviceLevel: "SEPA" })),
    t.upstream,
  );
});

Deno.test("bodySchema() checks bulk payments: a non-empty list of payments without debtorAccount", async () => {
  const { debtorAccount: _, ...entry } = payment;
  const bulk = {
    batchBookingPreferred: true,
    debtorAccount: { iban: IBAN.debtor },
    requestedExecutionDate: dayFromToday(3),
    payments: [entry, { ...entry, creditorName: "Other" }],
  };
  {
    await using t = await rig(policy());
    assertForwarded(await t.call("/v1/bulk-payments/domestic", post(bulk)), t.upstream);
  }
  await assertCases("/v1/bulk-payments/domestic", [
    { name: "empty", body: { ...bulk, payments: [] }, path: "payments", text: /must not be empty/ },
    {
      name: "entry debtor",
      body: { ...bulk, payments: [payment] },
      path: "payments[0].debtorAccount",
      text: /is not a field/,
    },
    {
      name: "entry field",
      body: { ...bulk, payments: [entry, { ...entry, creditorName: "" }] },
      path: "payments[1].creditorName",
      text: /must not be empty/,
    },
    {
      name: "too many",
      body: { ...bulk, payments: [entry, entry, entry] },
      path: "payments",
      text: /at most 2 entries/,
    },
    {
      name: "past date",
      body: { ...bulk, requestedExecutionDate: dayFromToday(-3) },
      path: "requestedExecutionDate",
      text: /must not be in the past/,
      code: "EXECUTION_DATE_INVALID",
    },
  ], { body_schema: { max_bulk_payments: 2 } });
});

Deno.test("bodySchema() checks periodic payments' Berlin Group schedule fields", async () => {
  const periodic = {
    ...payment,
    startDate: dayFromToday(1),
    endDate: dayFromToday(365),
    executionRule: "following",
    frequency: "Monthly",
    dayOfExecution: "01",
  };
  {
    await using t = await rig(policy());
    assertForwarded(await t.call("/v1/periodic-payments/domestic", post(periodic)), t.upstream);
  }
  await assertCases("/v1/periodic-payments/domestic", [
    {
      name: "startDate missing",
      body: changed(periodic, (b) => delete b.startDate),
      path: "startDate",
      text: /is required/,
    },
    {
      name: "startDate format",
      body: { ...periodic, startDate: "01.01.2030" },
      path: "startDate",
      text: /must be a date like/,
    },
    {
      name: "startDate past",
      body: { ...periodic, startDate: dayFromToday(-2) },
      path: "startDate",
      text: /past/,
      code: "EXECUTION_DATE_INVALID",
    },
    {
      name: "endDate before",
      body: { ...periodic, endDate: dayFromToday(0) },
      path: "endDate",
      text: /must not be before startDate/,
      code: "EXECUTION_DATE_INVALID",
    },
    {
      name: "frequency",
      body: { ...periodic, frequency: "Fortnightly" },
      path: "frequency",
      text: /must be one of "Daily", "Weekly"/,
    },
    {
      name: "frequency missing",
      body: changed(periodic, (b) => delete b.frequency),
      path: "frequency",
      text: /is required/,
    },
    {
      name: "executionRule",
      body: { ...periodic, executionRule: "nearest" },
      path: "executionRule",
      text: /"following", "preceding"/,
    },
    {
      name: "dayOfExecution",
      body: { ...periodic, dayOfExecution: "32" },
      path: "dayOfExecution",
      text: /day of the month/,
    },
  ]);
});

Deno.test("bodySchema() wants well-formed XML for pain.001 products", async () => {
  await using t = await rig(
    policy({ path_params: { offered_products: ["pain.001-sepa-credit-transfers"] } }),
  );
  const path = "/v1/payments/pain.001-sepa-credit-transfers";
  const xml = initiationHeaders({ "content-type": "application/xml" });
  assertForwarded(await t.call(path, post(PAIN_001, xml)), t.upstream);
  assert.equal(t.upstream.received[0].body, PAIN_001);
  const bad = [
    [PAIN_001.replace("</Document>", ""), /does not close "<Document>"/],
    [`<!DOCTYPE x [<!ENTITY a "b">]>${PAIN_001.replace(/^<\?xml[^>]*>/, "")}`, /DOCTYPE/],
    ["", /body is required/],
  ] as const;
  for (const [body, text] of bad) {
    assertRejected(
      await t.call(path, post(body, xml)),
      {
        status: 400,
        code: "FORMAT_ERROR",
        path: "body",
        text,
      },
      t.upstream,
      1,
    );
  }
});

Deno.test("bodySchema() accepts a periodic pain.001 as multipart/form-data, byte for byte", async () => {
  await using t = await rig(
    policy({ path_params: { offered_products: ["pain.001-sepa-credit-transfers"] } }),
  );
  const path = "/v1/periodic-payments/pain.001-sepa-credit-transfers";
  const headers = initiationHeaders({ "content-type": FORM_TYPE });
  const body = periodicForm();
  assertForwarded(await t.call(path, post(body, headers)), t.upstream);
  assert.equal(t.upstream.received[0].body, body);
  assert.equal(t.upstream.received[0].headers.get("content-type"), FORM_TYPE);
  // Parts without a Content-Type of their own are taken as the form defines them.
  const bare = periodicForm(periodicParts().map((part) => ({ ...part, contentType: undefined })));
  assertForwarded(await t.call(path, post(bare, headers)), t.upstream, 2);
});

Deno.test("bodySchema() judges each part of a periodic pain.001 form as the single forms are", async () => {
  await using t = await rig(
    policy({ path_params: { offered_products: ["pain.001-sepa-credit-transfers"] } }),
  );
  const path = "/v1/periodic-payments/pain.001-sepa-credit-transfers";
  const headers = initiationHeaders({ "content-type": FORM_TYPE });
  const [xml, json] = periodicParts();
  const schedule = (change: Record<string, unknown>) => ({
    ...json,
    text: JSON.stringify({ ...standingOrderPart(), ...change }),
  });
  const cases: [string, number, string, string, RegExp][] = [
    ["xml missing", 400, "FORMAT_ERROR", "xml_sct", /Part "xml_sct" is required/],
    ["json missing", 400, "FORMAT_ERROR", "json_standingorderType", /is required/],
    ["xml broken", 400, "FORMAT_ERROR", "xml_sct", /does not close "<Document>".*part "xml_sct"/],
    ["xml as json", 415, "CONTENT_TYPE_INVALID", "xml_sct", /"application\/xml" or "text\/xml"/],
    ["json as text", 415, "CONTENT_TYPE_INVALID", "json_standingorderType", /"application\/json"/],
    ["json broken", 400, "FORMAT_ERROR", "json_standingorderType", /well-formed JSON/],
    ["json duplicate", 400, "FORMAT_ERROR", "json_standingorderType.frequency", /not be repeated/],
    ["frequency", 400, "FORMAT_ERROR", "json_standingorderType.frequency", /must be one of/],
    ["startDate", 400, "EXECUTION_DATE_INVALID", "json_standingorderType.startDate", /past/],
    ["unknown part", 400, "FORMAT_ERROR", "extra", /Part "extra" is not a part of this form/],
  ];
  const bodies: Record<string, string> = {
    "xml missing": periodicForm([json]),
    "json missing": periodicForm([xml]),
    "xml broken": periodicForm([{ ...xml, text: xml.text.replace("</Document>", "") }, json]),
    "xml as json": periodicForm([{ ...xml, contentType: "application/json" }, json]),
    "json as text": periodicForm([xml, { ...json, contentType: "text/plain" }]),
    "json broken": periodicForm([xml, { ...json, text: "{" }]),
    "json duplicate": periodicForm([
      xml,
      { ...json, text: json.text.replace("{", '{"frequency":"Daily",') },
    ]),
    frequency: periodicForm([xml, schedule({ frequency: "Hourly" })]),
    startDate: periodicForm([xml, schedule({ startDate: dayFromToday(-3) })]),
    "unknown part": periodicForm([xml, json, { name: "extra", text: "x" }]),
  };
  for (const [name, status, code, where, text] of cases) {
    assertRejected(
      await t.call(path, post(bodies[name], headers)),
      { status, code, path: where, text },
      t.upstream,
    );
  }
  const unbounded = initiationHeaders({ "content-type": "multipart/form-data" });
  assertRejected(await t.call(path, post(periodicForm(), unbounded)), {
    status: 400,
    code: "FORMAT_ERROR",
    path: "Content-Type",
    text: /must carry a boundary/,
  }, t.upstream);
  const cut = periodicForm().slice(0, -30);
  assertRejected(await t.call(path, post(cut, headers)), {
    status: 400,
    code: "FORMAT_ERROR",
    path: "body",
    text: /^The multipart body ends before its closing boundary$/,
  }, t.upstream);
});

Deno.test("bodySchema() checks the consent body", async () => {
  const consent = consentBody();
  {
    await using t = await rig(policy());
    assertForwarded(await t.call("/v1/consents", post(consent)), t.upstream);
    assertForwarded(
      await t.call("/v1/consents", post({ ...consent, validUntil: "9999-12-31" })),
      t.upstream,
      2,
    );
    assertForwarded(
      await t.call(
        "/v1/consents",
        post({ ...consent, access: { availableAccounts: "allAccounts" }, frequencyPerDay: 1 }),
      ),
      t.upstream,
      3,
    );
  }
  await assertCases("/v1/consents", [
    {
      name: "max",
      body: { ...consent, frequencyPerDay: 5 },
      path: "frequencyPerDay",
      text: /at most 4/,
    },
    {
      name: "zero",
      body: { ...consent, frequencyPerDay: 0 },
      path: "frequencyPerDay",
      text: /at least 1/,
    },
    {
      name: "fraction",
      body: { ...consent, frequencyPerDay: 1.5 },
      path: "frequencyPerDay",
      text: /must be an integer/,
    },
    {
      name: "one-off",
      body: { ...consent, recurringIndicator: false, frequencyPerDay: 4 },
      path: "frequencyPerDay",
      text: /must be 1 for a one-off consent/,
    },
    {
      name: "past",
      body: { ...consent, validUntil: dayFromToday(-2) },
      path: "validUntil",
      text: /must not be in the past/,
      code: "PERIOD_INVALID",
    },
    {
      name: "not a date",
      body: { ...consent, validUntil: "2030-13-01" },
      path: "validUntil",
      text: /must be a date/,
    },
    {
      name: "combined missing",
      body: changed(consent, (b) => delete b.combinedServiceIndicator),
      path: "combinedServiceIndicator",
      text: /is required/,
    },
    {
      name: "recurring string",
      body: { ...consent, recurringIndicator: "true" },
      path: "recurringIndicator",
      text: /must be true or false/,
    },
    {
      name: "empty access",
      body: { ...consent, access: {} },
      path: "access",
      text: /must request some access/,
    },
    {
      name: "bad reference",
      body: { ...consent, access: { balances: [{ iban: "XX00" }] } },
      path: "access.balances[0].iban",
      text: /IBAN/,
    },
  ]);
});

Deno.test("bodySchema() lets a policy raise frequencyPerDay for a TPP with a bilateral agreement", async () => {
  const options = bodySchema.options.parse({
    max_frequency_per_day: 4,
    bilateral_frequency_per_day: { "PSDGE-NBG-123456": 24 },
  });
  const check = bodySchema.create(options, {
    operation: operation("createConsent"),
    services: defaultServices({ log: memoryLogger() }),
    sections: TEST_SECTIONS,
    decisions: {},
    report: () => {},
  })!;
  const app = new Hono<GatewayEnv>();
  app.onError((error) => toResponse(failureAnswer(error)));
  app.post("/:tpp", async (c, next) => {
    c.set("body", new Uint8Array(await c.req.arrayBuffer()));
    c.set("params", {});
    if (c.req.param("tpp") !== "none") {
      c.set("tpp", { id: c.req.param("tpp"), roles: ["PSP_AI"], domains: [] });
    }
    return check(c, next);
  }, (c) => c.text("forwarded"));
  const ask = async (tpp: string, frequencyPerDay: number) => {
    const response = await app.request(`/${tpp}`, {
      method: "POST",
      body: JSON.stringify({ ...consentBody(), frequencyPerDay }),
    });
    return response.status === 200 ? "ok" : (await response.json()).tppMessages[0].text;
  };
  assert.equal(await ask("PSDGE-NBG-123456", 24), "ok");
  assert.match(
    await ask("PSDGE-NBG-123456", 25),
    /at most 24 \(the bilateral agreement's maximum\)/,
  );
  assert.match(await ask("PSDGE-NBG-999999", 5), /at most 4$/);
  assert.match(await ask("none", 5), /at most 4$/);
});

Deno.test("bodySchema() accepts the authorisation bodies and refuses mixtures", async () => {
  const start = "/v1/consents/c-1/authorisations";
  const update = "/v1/consents/c-1/authorisations/a-1";
  const json = { "x-request-id": REQUEST_ID, "content-type": "application/json" };
  await using t = await rig(policy());
  let forwarded = 0;
  for (
    const body of [
      "{}",
      "null",
      '{"psuData":{"password":"s3cr&t"}}',
      '{"authenticationMethodId":"sms"}',
    ]
  ) {
    assertForwarded(
      await t.call(start, { method: "POST", headers: json, body }),
      t.upstream,
      ++forwarded,
    );
  }
  assertForwarded(
    await t.call(update, { method: "PUT", headers: json, body: '{"confirmationCode":"123456"}' }),
    t.upstream,
    ++forwarded,
  );
  const bad: [string, string, string, RegExp][] = [
    [
      "POST",
      start,
      '{"authenticationMethodId":"sms","scaAuthenticationData":"1"}',
      /at most one of/,
    ],
    ["POST", start, '{"confirmationCode":"123456"}', /is not a field/],
    ["POST", start, '{"psuData":{}}', /must carry password/],
    ["PUT", update, '{"scaAuthenticationData":""}', /must not be empty/],
    ["POST", start, "[]", /does not match any accepted form|must be an object/],
  ];
  for (const [method, path, body, text] of bad) {
    assertRejected(
      await t.call(path, { method, headers: json, body }),
      {
        status: 400,
        code: "FORMAT_ERROR",
        text,
      },
      t.upstream,
      forwarded,
    );
  }
});

Deno.test("bodySchema() checks the checkout order body", async () => {
  const order = checkoutOrderBody();
  const headers = { "content-type": "application/json", authorization: "Bearer token" };
  await using t = await rig(policy());
  assertForwarded(
    await t.call("/api/v1/checkout/orders", {
      method: "POST",
      headers,
      body: JSON.stringify(order),
    }),
    t.upstream,
  );
  const unit = (amount: Json) => ({ ...order, purchase_units: [{ amount }] });
  const bad: [Json, string, RegExp][] = [
    [{ ...order, intent: "SALE" }, "intent", /"CAPTURE", "AUTHORIZE"/],
    [changed(order, (b) => delete b.items), "items", /is required/],
    [{ ...order, items: [] }, "items", /must not be empty/],
    [
      { ...order, items: [{ amount: "1,5", description: "x", quantity: 1, product_id: "p" }] },
      "items[0].amount",
      /decimal/,
    ],
    [
      { ...order, items: [{ amount: "1", description: "x", quantity: 0, product_id: "p" }] },
      "items[0].quantity",
      /at least 1/,
    ],
    [
      { ...order, items: [{ amount: "1", description: "x", quantity: 1 }] },
      "items[0].product_id",
      /is required/,
    ],
    [
      unit({ currency_code: "USD", value: 1 }),
      "purchase_units[0].amount.currency_code",
      /must be "GEL"/,
    ],
    [
      unit({ currency_code: "GEL", value: true }),
      "purchase_units[0].amount.value",
      /as a string like "10.50" or a number like 10.5/,
    ],
    [
      unit({ currency_code: "GEL", value: "21.005" }),
      "purchase_units[0].amount.value",
      /at most two decimals/,
    ],
    [
      unit({ currency_code: "GEL", value: 0 }),
      "purchase_units[0].amount.value",
      /greater than zero/,
    ],
    [
      unit({ currency_code: "GEL", value: 1.005 }),
      "purchase_units[0].amount.value",
      /two decimals/,
    ],
    [{ ...order, locale: "de" }, "locale", /"ka", "ge", "en-US", "en"/],
    [{ ...order, capture_method: "LATER" }, "capture_method", /"AUTOMATIC", "MANUAL"/],
    [{ ...order, redirect_url: "http://shop.example/back" }, "redirect_url", /absolute https URL/],
    [changed(order, (b) => delete b.redirect_url), "redirect_url", /is required/],
  ];
  for (const [body, path, text] of bad) {
    assertRejected(
      await t.call("/api/v1/checkout/orders", {
        method: "POST",
        headers,
        body: JSON.stringify(body),
      }),
      { status: 400, code: "FORMAT_ERROR", path, text },
      t.upstream,
      1,
    );
  }
});

Deno.test("bodySchema() takes a checkout order's amounts as strings or numbers, either locale spelling, and sends the core the document's forms", async () => {
  const headers = { "content-type": "application/json", authorization: "Bearer token" };
  await using t = await rig(policy());
  const send = (body: Json) =>
    t.call("/api/v1/checkout/orders", { method: "POST", headers, body: JSON.stringify(body) });
  const order = {
    ...checkoutOrderBody(),
    locale: "ge",
    items: [
      { amount: 10.5, description: "Tea", quantity: 2, product_id: "tea-1" },
      { amount: "0.1", description: "Bag", quantity: 3, product_id: "bag-1" },
    ],
    purchase_units: [{ amount: { currency_code: "GEL", value: "21.30" } }],
  };
  assertForwarded(await send(order), t.upstream);
  const forwarded = JSON.parse(t.upstream.received[0].body);
  assert.equal(forwarded.locale, "ka");
  assert.deepEqual(forwarded.items.map((i: { amount: unknown }) => i.amount), ["10.50", "0.1"]);
  assert.equal(forwarded.purchase_units[0].amount.value, 21.3);
  const asDocumented = { ...checkoutOrderBody(), locale: "en-US" };
  assertForwarded(await send(asDocumented), t.upstream, 2);
  assert.equal(
    t.upstream.received[1].body,
    JSON.stringify(asDocumented),
    "an order in the document's forms reaches the core byte for byte",
  );
  assertForwarded(await send({ ...asDocumented, locale: "en" }), t.upstream, 3);
  assert.equal(JSON.parse(t.upstream.received[2].body).locale, "en-US");
  assertRejected(
    await send({ ...order, purchase_units: [{ amount: { currency_code: "GEL", value: 21.29 } }] }),
    {
      status: 400,
      code: "PARAMETER_NOT_CONSISTENT",
      path: "purchase_units",
      text: /^The purchase units add up to "21\.29", the items \(amount × quantity\) to "21\.30"$/,
    },
    t.upstream,
    3,
  );
  assertRejected(
    await send({
      ...order,
      purchase_units: [
        { amount: { currency_code: "GEL", value: 20 } },
        { amount: { currency_code: "GEL", value: "1.30" } },
        { amount: { currency_code: "GEL", value: 1 } },
      ],
    }),
    { status: 400, code: "PARAMETER_NOT_CONSISTENT", path: "purchase_units" },
    t.upstream,
    3,
  );
});

Deno.test("bodySchema() refuses a body where the operation takes none", async () => {
  await using t = await rig(policy());
  assertRejected(
    await t.call("/v1/consents/c-1", {
      method: "DELETE",
      headers: { "x-request-id": REQUEST_ID },
      body: "{}",
    }),
    { status: 400, code: "FORMAT_ERROR", path: "body", text: /takes no request body/ },
    t.upstream,
  );
  // No body, and an empty one declared as Content-Length: 0, are no body.
  for (const body of [undefined, ""]) {
    const outcome = await t.call("/v1/consents/c-1", {
      method: "DELETE",
      headers: { "x-request-id": crypto.randomUUID() },
      body,
    });
    assertForwarded(outcome, t.upstream, body === undefined ? 1 : 2);
  }
});

Deno.test("bodySchema() refuses malformed JSON, duplicate keys, deep nesting, controls and non-UTF-8", async () => {
  await using t = await rig(policy());
  const text = JSON.stringify(payment);
  const cases: [BodyInit, string, RegExp][] = [
    ["{", "body", /well-formed JSON/],
    [
      text.replace('"creditorName"', '"creditorName":"X","creditorName"'),
      "creditorName",
      /must not be repeated/,
    ],
    ["[".repeat(20) + "]".repeat(20), "body", /deeper than 16/],
    ["[".repeat(300_000) + "]".repeat(300_000), "body", /deeper than 16|well-formed JSON/],
    [text.replace("Merchant123", "Merchant\\u0000"), "creditorName", /control characters/],
    [new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]), "body", /well-formed JSON|UTF-8/],
    ["", "body", /body is required/],
  ];
  for (const [body, path, expected] of cases) {
    const outcome = await t.call("/v1/payments/domestic", {
      method: "POST",
      headers: initiationHeaders(),
      body,
    });
    assertRejected(
      outcome,
      { status: 400, code: "FORMAT_ERROR", path, text: expected },
      t.upstream,
    );
  }
});
