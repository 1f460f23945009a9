/**
 * The contract oracle itself: it holds an answer to the document (the e2e flows rely on it, in
 * tests/e2e/flow.ts, for every answer of the sandbox bank they see).
 */
import assert from "node:assert/strict";
import { DEFAULT_POLICY, startGateway } from "../support/gateway.ts";
import { startUpstream } from "../support/upstream.ts";
import { Contract } from "./contract.ts";

const ID = "99391c7e-ad88-49ec-a2ad-99ddcb1f7721";

function answer(status: number, body: unknown, id: string | null = ID) {
  const headers = new Headers(id === null ? {} : { "x-request-id": id });
  return { status, headers, body };
}

Deno.test("Contract.assertAnswer() accepts what the document describes and nothing else", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({ policy: DEFAULT_POLICY, upstream: upstream.url });
  const contract = await Contract.of(gateway);
  const status = "/v1/consents/c-1/status";
  contract.assertAnswer("GET", status, answer(200, { consentStatus: "valid" }));
  contract.assertAnswer("DELETE", "/v1/consents/c-1", answer(204, undefined));
  contract.assertAnswer(
    "GET",
    status,
    answer(401, { tppMessages: [{ category: "ERROR", code: "CONSENT_EXPIRED", text: "x" }] }),
  );
  const refused: [string, string, ReturnType<typeof answer>][] = [
    ["GET", status, answer(200, { consentStatus: "granted" })],
    ["GET", status, answer(200, {})],
    ["GET", status, answer(200, { consentStatus: "valid" }, null)],
    ["GET", status, answer(200, { consentStatus: "valid" }, "req-1")],
    ["GET", status, answer(201, { consentStatus: "valid" })],
    ["GET", status, answer(401, { tppMessages: [{ category: "ERROR", code: "FORMAT_ERROR" }] })],
    ["GET", status, answer(400, { error: "bad" })],
    ["POST", "/v1/consents", answer(201, { consentStatus: "received" })],
    ["DELETE", "/v1/consents/c-1", answer(204, { consentStatus: "terminatedByTpp" })],
    ["PATCH", "/v1/consents/c-1", answer(200, {})],
  ];
  for (const [method, path, refusedAnswer] of refused) {
    assert.throws(
      () => contract.assertAnswer(method, path, refusedAnswer),
      assert.AssertionError,
      `${method} ${path} ${JSON.stringify(refusedAnswer.body)}`,
    );
  }
  // Literal segments win over parameters, as in the gateway's router.
  assert.equal(
    contract.operation("GET", "/v1/products/deposits")?.entry.operationId,
    "getDeposits",
  );
  assert.equal(
    contract.operation("GET", "/v1/products/en?page=1")?.entry.operationId,
    "getProducts",
  );
});
