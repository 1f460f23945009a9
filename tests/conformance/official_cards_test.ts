/**
 * Card accounts against the official Berlin Group OpenAPI file's schemas
 * (`official_card_schemas.ts`): the sandbox bank's card answers through the gateway are the file's
 * bodies (and carry no field the file does not name), the published contract describes the card
 * operations' bodies and the card transaction list's query as the file does, and the gateway's
 * refusal of a query outside the file is the standard's error body.
 */
import assert from "node:assert/strict";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { startBank } from "../e2e/bank.ts";
import { call, PSU_IP } from "../e2e/flow.ts";
import { recurringConsent } from "../support/consents.ts";
import type { TestGateway } from "../support/gateway.ts";
import { Contract } from "./contract.ts";
import { ERROR_NG } from "./official_schemas.ts";
import {
  CARD_ACCOUNT_DETAILS_200,
  CARD_ACCOUNT_LIST,
  CARD_ACCOUNTS_TRANSACTIONS_200,
  CARD_TRANSACTION_QUERY,
  READ_CARD_ACCOUNT_BALANCE_200,
} from "./official_card_schemas.ts";
import { CARDS } from "../../src/sandbox/card_data.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

// deno-lint-ignore no-explicit-any
const ajv = new (Ajv2020 as any)({ allErrors: true, strict: false });
// deno-lint-ignore no-explicit-any
(addFormats as any)(ajv);

/**
 * A schema with every object that names its properties closed to others: the sandbox sends only
 * fields the file names (the file itself leaves its objects open).
 */
function closed(schema: Json): Json {
  if (Array.isArray(schema)) return schema.map(closed);
  if (typeof schema !== "object" || schema === null) return schema;
  const out: Json = Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, closed(v)]));
  if (out.type === "object" && out.properties && out.additionalProperties === undefined) {
    out.additionalProperties = false;
  }
  return out;
}

/** Validators of the file's schema and of its closed form. */
function validators(schema: Json) {
  return { open: ajv.compile(schema), closed: ajv.compile(closed(schema)) };
}

const SCHEMAS = {
  list: validators(CARD_ACCOUNT_LIST),
  details: validators(CARD_ACCOUNT_DETAILS_200),
  balances: validators(READ_CARD_ACCOUNT_BALANCE_200),
  transactions: validators(CARD_ACCOUNTS_TRANSACTIONS_200),
};
const errorBody = ajv.compile(ERROR_NG);

/** Asserts that `body` is the file's `kind` body, with no field the file does not name. */
function assertOfficial(kind: keyof typeof SCHEMAS, body: unknown) {
  const { open, closed } = SCHEMAS[kind];
  assert.ok(open(body), `${kind}: ${JSON.stringify(open.errors)}`);
  assert.ok(closed(body), `${kind} (closed): ${JSON.stringify(closed.errors)}`);
}

/** A valid consent of PSU-CARD over `access`, authorised through the gateway. */
async function cardConsent(gateway: TestGateway, access: Record<string, unknown>) {
  const created = await call(gateway, "POST", "/v1/consents", {
    headers: { "psu-ip-address": PSU_IP, "psu-id": "PSU-CARD" },
    body: recurringConsent({ access }),
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const done = await call(gateway, "PUT", created.body._links.scaStatus.href, {
    body: { confirmationCode: "123456" },
  });
  assert.equal(done.body.scaStatus, "finalised");
  return created.body.consentId as string;
}

Deno.test("the sandbox's card account answers, through the gateway, are the official file's", async () => {
  await using bank = await startBank();
  const consentId = await cardConsent(bank.gateway, { allPsd2: "allAccounts" });
  const headers = { "consent-id": consentId, "psu-ip-address": PSU_IP };
  const read = (path: string) => call(bank.gateway, "GET", path, { headers });
  const list = await read("/v1/card-accounts");
  assert.equal(list.status, 200, JSON.stringify(list.body));
  assertOfficial("list", list.body);
  assert.equal(list.body.cardAccounts.length, CARDS.length);
  for (const card of list.body.cardAccounts) {
    const details = await read(`/v1/card-accounts/${card.resourceId}`);
    assert.equal(details.status, 200);
    assertOfficial("details", details.body);
    const balances = await read(`/v1/card-accounts/${card.resourceId}/balances`);
    assert.equal(balances.status, 200);
    assertOfficial("balances", balances.body);
    const report = `/v1/card-accounts/${card.resourceId}/transactions`;
    for (
      const query of [
        "bookingStatus=both&dateFrom=2025-01-01",
        "bookingStatus=pending&dateFrom=2025-06-01",
      ]
    ) {
      const answer = await read(`${report}?${query}`);
      assert.equal(answer.status, 200, query);
      assertOfficial("transactions", answer.body);
    }
    const page = await read(`${report}?bookingStatus=booked&dateFrom=2025-01-01&itemsPerPage=5`);
    assertOfficial("transactions", page.body);
    assert.ok(page.body.cardTransactions._links.next, "a paged card report links its next page");
  }
});

Deno.test("/openapi.json describes the card operations' bodies and the card report's query as the file", async () => {
  await using bank = await startBank();
  const contract = await Contract.of(bank.gateway);
  const body = (method: string, path: string) => {
    const operation = contract.operation(method, path)!;
    const ok = contract.resolve(operation.entry.responses["200"]);
    return { operation, schema: ok.content["application/json"].schema };
  };
  const cases: [string, Json, Json][] = [
    ["/v1/card-accounts", { cardAccounts: [] }, { accounts: [] }],
    ["/v1/card-accounts/k1", { cardAccount: { maskedPan: "5254**3241", currency: "GEL" } }, {
      cardAccount: { maskedPan: "5254**3241" },
    }],
    ["/v1/card-accounts/k1/balances", { balances: [] }, { cardAccount: {} }],
    ["/v1/card-accounts/k1/transactions", { cardTransactions: { booked: [], _links: {} } }, {
      cardTransactions: { booked: [{ cardTransactionId: "t1" }], _links: {} },
    }],
  ];
  for (const [path, fits, breaks] of cases) {
    const { schema } = body("GET", path);
    assert.deepEqual(contract.problems(schema, fits), [], path);
    assert.notDeepEqual(contract.problems(schema, breaks), [], `${path} refuses a wrong body`);
  }
  const { operation } = body("GET", "/v1/card-accounts/k1/transactions");
  const parameters = (operation.entry.parameters as Json[]).map((p) => contract.resolve(p))
    .filter((p) => p.in === "query");
  for (const official of CARD_TRANSACTION_QUERY) {
    const published = parameters.find((p) => p.name === official.name);
    assert.ok(published, official.name);
    assert.equal(published.required ?? false, official.required, official.name);
    assert.equal(published.schema.type, official.schema.type, official.name);
    if ("enum" in official.schema) {
      assert.deepEqual(published.schema.enum, official.schema.enum);
    }
  }
  const listQuery = (body("GET", "/v1/card-accounts").operation.entry.parameters as Json[])
    .map((p) => contract.resolve(p)).filter((p) => p.in === "query");
  assert.deepEqual(listQuery, [], "the card account list takes no query");
});

Deno.test("the gateway refuses a card report's bookingStatus outside the file with the standard's error body", async () => {
  await using bank = await startBank();
  const answer = await call(
    bank.gateway,
    "GET",
    "/v1/card-accounts/k1/transactions?bookingStatus=information",
    { headers: { "consent-id": "c-1" } },
  );
  assert.equal(answer.status, 400);
  assert.ok(errorBody(answer.body), JSON.stringify(errorBody.errors));
  assert.equal(answer.body.tppMessages[0].code, "FORMAT_ERROR");
  assert.equal(answer.body.tppMessages[0].path, "bookingStatus");
});
