/**
 * Signing baskets against the official Berlin Group OpenAPI file's schemas
 * (`official_basket_schemas.ts`): every answer of a basket's life in the sandbox bank, through the
 * gateway (create, read, status, the embedded authorisation's steps, the list and the SCA status),
 * the errors of the bank and of the gateway, and the published contract of the operations.
 */
import assert from "node:assert/strict";
import Ajv2020 from "ajv/dist/2020.js";
import { initiatePayment, startBank } from "../e2e/bank.ts";
import { call, PSU_IP } from "../e2e/flow.ts";
import { policy, rig } from "../support/hardening.ts";
import { initiationHeaders } from "../support/requests.ts";
import { Contract } from "./contract.ts";
import { ERROR_NG } from "./official_schemas.ts";
import {
  AUTHORISATIONS,
  SCA_STATUS_RESPONSE,
  SIGNING_BASKET,
  SIGNING_BASKET_200,
  SIGNING_BASKET_201,
  SIGNING_BASKET_STATUS_200,
  START_SCAPROCESS_RESPONSE,
  UPDATE_PSU_DATA_RESPONSE,
} from "./official_basket_schemas.ts";
import { STANDARD_CODES } from "../../src/psd2/errors.ts";

// deno-lint-ignore no-explicit-any
const ajv = new (Ajv2020 as any)({ allErrors: true, strict: false });
const schemas = {
  request: ajv.compile(SIGNING_BASKET),
  created: ajv.compile(SIGNING_BASKET_201),
  read: ajv.compile(SIGNING_BASKET_200),
  status: ajv.compile(SIGNING_BASKET_STATUS_200),
  started: ajv.compile(START_SCAPROCESS_RESPONSE),
  list: ajv.compile(AUTHORISATIONS),
  scaStatus: ajv.compile(SCA_STATUS_RESPONSE),
  update: ajv.compile(UPDATE_PSU_DATA_RESPONSE),
  error: ajv.compile(ERROR_NG),
};

/** Asserts that `body` is the file's `name`. */
function assertOfficial(name: keyof typeof schemas, body: unknown) {
  const validate = schemas[name];
  assert.ok(
    validate(body),
    `${name}: ${JSON.stringify(validate.errors)} in ${JSON.stringify(body)}`,
  );
}

/** Asserts an official error body whose first message has the standard's code for the status. */
// deno-lint-ignore no-explicit-any
function assertOfficialError(status: number, body: any, code: string) {
  assertOfficial("error", body);
  assert.equal(body.tppMessages[0].code, code);
  const codes: readonly string[] = STANDARD_CODES[status as keyof typeof STANDARD_CODES];
  assert.ok(codes.includes(code), `${status} ${code} is not the standard's`);
}

const EMBEDDED = { "tpp-redirect-preferred": "false", "psu-id": "PSU-BASKET" };

Deno.test("the sandbox's signing basket answers, through the gateway, are the official file's", async () => {
  await using bank = await startBank();
  const ids = [];
  for (let i = 0; i < 2; i++) ids.push((await initiatePayment(bank)).body.paymentId as string);
  const created = await call(bank.gateway, "POST", "/v1/signing-baskets", {
    body: { paymentIds: ids },
    headers: { "psu-ip-address": PSU_IP },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assertOfficial("created", created.body);
  const href = `/v1/signing-baskets/${created.body.basketId}`;
  assert.equal(created.body._links.startAuthorisation.href, `${href}/authorisations`);
  assertOfficial("read", (await call(bank.gateway, "GET", href)).body);
  assertOfficial("status", (await call(bank.gateway, "GET", `${href}/status`)).body);

  const started = await call(bank.gateway, "POST", `${href}/authorisations`, {
    body: { psuData: { password: "sandbox" } },
    headers: EMBEDDED,
  });
  assert.equal(started.status, 201, JSON.stringify(started.body));
  assertOfficial("started", started.body);
  assert.equal(started.body.scaStatus, "psuAuthenticated");
  const auth = `${href}/authorisations/${started.body.authorisationId}`;
  const selected = await call(bank.gateway, "PUT", auth, {
    body: { authenticationMethodId: "sms-otp" },
    headers: EMBEDDED,
  });
  assertOfficial("update", selected.body);
  const done = await call(bank.gateway, "PUT", auth, {
    body: { scaAuthenticationData: "123456" },
    headers: EMBEDDED,
  });
  assertOfficial("update", done.body);
  assert.equal(done.body.scaStatus, "finalised");
  assertOfficial("list", (await call(bank.gateway, "GET", `${href}/authorisations`)).body);
  assertOfficial("scaStatus", (await call(bank.gateway, "GET", auth)).body);
  const after = await call(bank.gateway, "GET", href);
  assertOfficial("read", after.body);
  assert.equal(after.body.transactionStatus, "ACTC");

  // The bank's refusals: a payment it does not know (in the payload), a basket authorised already.
  const unknown = await call(bank.gateway, "POST", "/v1/signing-baskets", {
    body: { paymentIds: ["no-such-payment"] },
    headers: { "psu-ip-address": PSU_IP },
  });
  assert.equal(unknown.status, 400);
  assertOfficialError(400, unknown.body, "RESOURCE_UNKNOWN");
  const deleted = await call(bank.gateway, "DELETE", href);
  assert.equal(deleted.status, 409);
  assertOfficialError(409, deleted.body, "STATUS_INVALID");
});

Deno.test("the gateway's refusals of a signing basket are the official error body", async () => {
  await using t = await rig(policy());
  const post = (body: unknown) =>
    t.call("/v1/signing-baskets", {
      method: "POST",
      headers: initiationHeaders({ "x-request-id": crypto.randomUUID() }),
      body: JSON.stringify(body),
    });
  for (const body of [{}, { paymentIds: [] }, { paymentIds: ["a b"] }]) {
    const bad = await post(body);
    assert.equal(bad.status, 400, JSON.stringify(body));
    assertOfficialError(400, bad.body, "FORMAT_ERROR");
  }
  assert.equal(t.upstream.received.length, 0);
  await using off = await rig(policy({}, { groups: { baskets: { service: { offered: false } } } }));
  const refused = await off.call("/v1/signing-baskets", {
    method: "POST",
    headers: initiationHeaders({ "x-request-id": crypto.randomUUID() }),
    body: JSON.stringify({ paymentIds: ["p-1"] }),
  });
  assert.equal(refused.status, 405);
  assertOfficialError(405, refused.body, "SERVICE_INVALID");
});

Deno.test("/openapi.json describes signing baskets as the official file does", async () => {
  await using t = await rig(policy());
  const contract = await Contract.of(t.gateway);
  const answerOf = (path: string, method: string, status: string) =>
    contract.resolve(contract.document.paths[path][method].responses[status])
      .content["application/json"].schema;
  const cases: [string, string, string, keyof typeof schemas, unknown[]][] = [
    ["/v1/signing-baskets", "post", "201", "created", [
      { transactionStatus: "RCVD", basketId: "b-1", _links: { self: { href: "/v1/x" } } },
      { transactionStatus: "RCVD", basketId: "b-1" },
      { basketId: "b-1", _links: {} },
    ]],
    ["/v1/signing-baskets/{basketId}", "get", "200", "read", [
      { payments: ["p-1"], transactionStatus: "ACTC" },
      { payments: [], transactionStatus: "ACTC" },
      { payments: ["p-1"] },
    ]],
    ["/v1/signing-baskets/{basketId}/status", "get", "200", "status", [
      { transactionStatus: "RJCT" },
      {},
    ]],
  ];
  for (const [path, method, status, name, bodies] of cases) {
    const schema = answerOf(path, method, status);
    for (const body of bodies) {
      const official = schemas[name](body);
      assert.equal(contract.problems(schema, body).length === 0, official, JSON.stringify(body));
    }
  }
  const content = contract.document.paths["/v1/signing-baskets"].post.requestBody
    .content["application/json"];
  const examples = Object.entries(content.examples ?? {});
  assert.ok(examples.length > 0, "a request example");
  for (const [name, example] of examples) {
    const value = (example as { value: unknown }).value;
    assertOfficial("request", value);
    assert.deepEqual(contract.problems(content.schema, value), [], name);
  }
});
