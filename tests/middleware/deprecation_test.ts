import assert from "node:assert/strict";
// In-process through the app's fetch (the upstream is still real HTTP); see tests/support/gateway.ts.
import { gatewayApp as startGateway } from "../support/gateway.ts";
import { startUpstream } from "../support/upstream.ts";
import { passthroughPolicy } from "../support/policies.ts";
import { deprecation } from "../../middleware/deprecation.ts";

const ID = "0d9e7f6a-5b4c-4d3e-8f2a-1b0c9d8e7f6a";
const POLICY = passthroughPolicy({
  operations: {
    createCheckoutOrder: {
      deprecation: {
        since: "2025-01-01",
        sunset: "2027-06-30",
        link: "https://bank.example/deprecations",
      },
    },
  },
});

Deno.test("deprecation() marks deprecated operations only, with Sunset and Link from the policy", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({ policy: POLICY, upstream: upstream.url });
  const order = await gateway.fetch("/api/v1/checkout/orders", {
    method: "POST",
    headers: { "x-request-id": ID, "content-type": "application/json" },
    body: "{}",
  });
  await order.body?.cancel();
  assert.equal(order.headers.get("deprecation"), `@${Date.parse("2025-01-01") / 1000}`);
  assert.equal(order.headers.get("sunset"), "Wed, 30 Jun 2027 00:00:00 GMT");
  assert.equal(order.headers.get("link"), '<https://bank.example/deprecations>; rel="deprecation"');
  const calculator = await gateway.fetch("/v1/services/installment/calculate");
  await calculator.body?.cancel();
  assert.equal(calculator.headers.get("deprecation"), "true");
  assert.equal(calculator.headers.get("sunset"), null);
  const products = await gateway.fetch("/v1/products/en");
  await products.body?.cancel();
  assert.equal(products.headers.get("deprecation"), null);
});

Deno.test("deprecation() refuses a sunset before since, and takes one on the same day", () => {
  const check = (since: string, sunset: string) =>
    deprecation.validate!(deprecation.options.parse({ since, sunset }), {} as never);
  assert.deepEqual(check("2025-01-01", "2024-12-31"), [
    'sunset "2024-12-31" is before since "2025-01-01"',
  ]);
  assert.deepEqual(check("2025-01-01", "2025-01-01"), []);
});
