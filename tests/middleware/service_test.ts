import assert from "node:assert/strict";
// In-process through the app's fetch (the upstream is still real HTTP); see tests/support/gateway.ts.
import { gatewayApp as startGateway } from "../support/gateway.ts";
import { startUpstream } from "../support/upstream.ts";
import { passthroughPolicy } from "../support/policies.ts";

const ID = "0d9e7f6a-5b4c-4d3e-8f2a-1b0c9d8e7f6a";

Deno.test("service: a group switched off answers 405 SERVICE_INVALID and the core sees nothing", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({
    policy: passthroughPolicy({
      groups: { baskets: { service: { offered: false } } },
      operations: { getCardAccountList: { service: { offered: false } } },
    }),
    upstream: upstream.url,
  });
  for (
    const [method, path] of [
      ["POST", "/v1/signing-baskets"],
      ["GET", "/v1/signing-baskets/b1/status"],
      ["GET", "/v1/card-accounts"],
    ]
  ) {
    const res = await gateway.fetch(path, {
      method,
      headers: { "x-request-id": ID, "content-type": "application/json" },
      ...(method === "POST" ? { body: '{"paymentIds":["p1"]}' } : {}),
    });
    const body = await res.json();
    assert.equal(res.status, 405, path);
    assert.equal(body.tppMessages[0].code, "SERVICE_INVALID");
    assert.equal(res.headers.get("x-request-id"), ID);
  }
  assert.equal(upstream.received.length, 0);
  // The rest of the group and the other groups are still offered.
  const details = await gateway.fetch("/v1/card-accounts/c1", {
    headers: { "x-request-id": ID, "consent-id": "c1" },
  });
  await details.body?.cancel();
  assert.equal(details.status, 200);
  assert.equal(upstream.received.length, 1);
});
