/**
 * Answers against the official Berlin Group OpenAPI file's schemas (`official_schemas.ts`): the
 * gateway's 406, 413, 415 and 503 bodies are the standard's error body with the standard's code
 * where it has one (406) and the gateway's own documented codes elsewhere; a payment status read
 * whose message carries a code (FUNDS_NOT_AVAILABLE) is the file's `tppMessageGeneric`.
 */
import assert from "node:assert/strict";
import Ajv2020 from "ajv/dist/2020.js";
import { startGateway } from "../support/gateway.ts";
import { closedPort, startUpstream } from "../support/upstream.ts";
import { initiationHeaders, singlePayment } from "../support/requests.ts";
import { buildPolicy, type PolicyInput } from "../support/policies.ts";
import { ERROR_NG, PAYMENT_STATUS_200 } from "./official_schemas.ts";
import { OWN_CODES, STANDARD_CODES } from "../../src/psd2/errors.ts";

// deno-lint-ignore no-explicit-any
const ajv = new (Ajv2020 as any)({ allErrors: true, strict: false });
const errorBody = ajv.compile(ERROR_NG);
const paymentStatus = ajv.compile(PAYMENT_STATUS_200);

const FUNDS = {
  transactionStatus: "RJCT",
  fundsAvailable: false,
  tppMessages: [{
    category: "ERROR",
    code: "FUNDS_NOT_AVAILABLE",
    path: "",
    text: "Insufficient funds on the debtor account (ISO 20022 reason AM04)",
  }],
};

function statusCore() {
  return startUpstream(() => Response.json(FUNDS));
}

async function readStatus(policy?: PolicyInput) {
  await using core = statusCore();
  await using gateway = await startGateway({ upstream: core.url, policy });
  const response = await gateway.fetch("/v1/payments/domestic/p-1/status", {
    headers: { "x-request-id": crypto.randomUUID() },
  });
  assert.equal(response.status, 200);
  return await response.json();
}

Deno.test("accept() gives a status read's coded message the official file's form", async () => {
  const body = await readStatus();
  assert.ok(paymentStatus(body), JSON.stringify(paymentStatus.errors));
  assert.deepEqual(body.tppMessages, [{
    category: "ERROR",
    code: "ERROR",
    path: "",
    text: "FUNDS_NOT_AVAILABLE: Insufficient funds on the debtor account (ISO 20022 reason AM04)",
  }]);
  assert.equal(body.fundsAvailable, false);
  assert.equal(body.transactionStatus, "RJCT");
});

Deno.test("accept() with success_messages as_sent leaves a status read's messages as the core sent them", async () => {
  const body = await readStatus(
    buildPolicy({
      upstream: { url: "${UPSTREAM_URL}", prefix: "/psd2/v1" },
      defaults: { accept: { success_messages: "as_sent" }, idempotency: { mode: "off" } },
    }),
  );
  assert.deepEqual(body, FUNDS);
  assert.equal(paymentStatus(body), false, "the official file refuses the code there");
});

Deno.test("the gateway's 406, 413, 415 and 503 bodies are the standard's error body", async () => {
  await using gateway = await startGateway({ upstream: `http://127.0.0.1:${closedPort()}` });
  const headers = initiationHeaders();
  const payment = JSON.stringify(singlePayment());
  const post = (extra: Record<string, string>, body = payment) =>
    gateway.fetch("/v1/payments/domestic", {
      method: "POST",
      headers: { ...headers, ...extra, "x-request-id": crypto.randomUUID() },
      body,
    });
  const answers: [number, Response][] = [
    [406, await post({ accept: "application/xml" })],
    [
      406,
      await gateway.fetch("/v1/accounts", {
        headers: { "x-request-id": crypto.randomUUID(), "consent-id": "c-1", accept: "text/csv" },
      }),
    ],
    [413, await post({}, "x".repeat(2_000_000))],
    [415, await post({ "content-type": "text/plain" })],
    [503, await post({})],
  ];
  for (const [status, response] of answers) {
    assert.equal(response.status, status);
    assert.match(response.headers.get("content-type") ?? "", /^application\/json/);
    const body = await response.json();
    assert.ok(errorBody(body), `${status}: ${JSON.stringify(errorBody.errors)}`);
    const codes: readonly string[] = status in STANDARD_CODES
      ? STANDARD_CODES[status as keyof typeof STANDARD_CODES]
      : OWN_CODES[status as keyof typeof OWN_CODES];
    for (const message of body.tppMessages) {
      assert.ok(codes.includes(message.code), `${status} ${message.code}`);
    }
  }
});

Deno.test("accept() leaves a payment initiation's 201 messages alone: their codes are the file's own", async () => {
  const created = {
    transactionStatus: "RCVD",
    paymentId: "p-1",
    _links: {},
    tppMessages: [{ category: "WARNING", code: "BENEFICIARY_WHITELISTING_REQUIRED" }],
  };
  await using core = startUpstream(() => Response.json(created, { status: 201 }));
  await using gateway = await startGateway({ upstream: core.url });
  const response = await gateway.fetch("/v1/payments/domestic", {
    method: "POST",
    headers: initiationHeaders({ "x-request-id": crypto.randomUUID() }),
    body: JSON.stringify(singlePayment()),
  });
  assert.equal(response.status, 201);
  assert.deepEqual((await response.json()).tppMessages, created.tppMessages);
});
