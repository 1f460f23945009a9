import assert from "node:assert/strict";
// In-process through the app's fetch (the upstream is still real HTTP); see tests/support/gateway.ts.
import { gatewayApp as startGateway } from "../support/gateway.ts";
import { startUpstream } from "../support/upstream.ts";
import { buildPolicy } from "../support/policies.ts";

const POLICY = buildPolicy({
  defaults: {
    idempotency: { reads: "unique" },
    rate_limit: {
      limits: {
        per_tpp: { key: ["tpp"], limit: 100, window: "1m" },
        per_operation: { key: ["tpp", "operation"], limit: 50, window: "1m" },
      },
    },
    consent_frequency: { unknown_consent_limit: 10 },
  },
});

Deno.test("decide() asks the store once per request for idempotency, every limit and the consent counter", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({ policy: POLICY, upstream: upstream.url });
  const stats = gateway.store.stats;
  const before = stats.roundTrips;
  const response = await gateway.fetch("/v1/accounts/a1/balances", {
    headers: { "x-request-id": crypto.randomUUID(), "consent-id": "c-1" },
  });
  assert.equal(response.status, 200);
  await response.body?.cancel();
  assert.equal(response.headers.get("ratelimit-remaining"), "49", "both limits were counted");
  assert.equal(stats.roundTrips - before, 1);
});
