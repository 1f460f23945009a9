import assert from "node:assert/strict";
// In-process through the app's fetch (the upstream is still real HTTP); see tests/support/gateway.ts.
import { gatewayApp as startGateway } from "../support/gateway.ts";
import { startUpstream } from "../support/upstream.ts";
import { checkoutOrderBody } from "../support/requests.ts";
import { buildPolicy, type LevelInput } from "../support/policies.ts";

type BearerOptions = LevelInput["bearer_token"];

async function call(path: string, init: RequestInit, bearer: BearerOptions = { mode: "off" }) {
  await using upstream = startUpstream();
  const policy = buildPolicy({ defaults: { bearer_token: bearer } });
  await using gateway = await startGateway({ policy, upstream: upstream.url });
  const response = await gateway.fetch(path, init);
  return { response, body: await response.json(), reached: upstream.received.length };
}

const CHECKOUT = {
  method: "POST",
  headers: { "content-type": "application/json", "x-request-id": crypto.randomUUID() },
  body: JSON.stringify(checkoutOrderBody()),
};

Deno.test("authorization() refuses a checkout order without Authorization, with bearer_token off", async () => {
  const { response, body, reached } = await call("/api/v1/checkout/orders", CHECKOUT);
  assert.equal(response.status, 401);
  assert.deepEqual(
    { code: body.tppMessages[0].code, path: body.tppMessages[0].path },
    { code: "TOKEN_UNKNOWN", path: "Authorization" },
  );
  assert.equal(response.headers.get("www-authenticate"), 'Bearer realm="xs2a-edge"');
  assert.equal(reached, 0);
});

Deno.test("authorization() passes a request with Authorization, and operations that do not require it", async () => {
  const withToken = await call("/api/v1/checkout/orders", {
    ...CHECKOUT,
    headers: { ...CHECKOUT.headers, authorization: "Bearer merchant-token" },
  });
  assert.equal(withToken.response.status, 200);
  assert.equal(withToken.reached, 1);
  const products = await call("/v1/products/deposits", {});
  assert.equal(products.response.status, 200);
  assert.equal(products.reached, 1);
});

Deno.test("authorization() applies with bearer_token in report mode and where it says required: false", async () => {
  for (
    const bearer of [
      { mode: "report", jwks_url: "https://auth.example/jwks" },
      { required: false },
    ] as BearerOptions[]
  ) {
    const { response, body, reached } = await call("/api/v1/checkout/orders", CHECKOUT, bearer);
    assert.equal(response.status, 401, JSON.stringify(bearer));
    assert.equal(body.tppMessages[0].code, "TOKEN_UNKNOWN");
    assert.equal(reached, 0);
  }
});

Deno.test("authorization() says which header is missing", async () => {
  const { body } = await call("/api/v1/checkout/orders", CHECKOUT);
  assert.equal(body.tppMessages[0].text, 'Header "Authorization" is required for this operation');
});

Deno.test("authorization() takes a value of only non-HTTP white space as missing", async () => {
  // HTTP trims spaces and tabs itself; a no-break space (obs-text) stays in the value. Control
  // characters never get this far (header rules: 400).
  for (const blank of ["\u00a0", "\u00a0 \u00a0"]) {
    const { response, body, reached } = await call("/api/v1/checkout/orders", {
      ...CHECKOUT,
      headers: { ...CHECKOUT.headers, authorization: blank },
    });
    assert.equal(response.status, 401, JSON.stringify(blank));
    assert.equal(body.tppMessages[0].code, "TOKEN_UNKNOWN");
    assert.equal(reached, 0);
  }
});

Deno.test("authorization() is off under mode: off", async () => {
  await using upstream = startUpstream();
  const policy = buildPolicy({
    defaults: { bearer_token: { mode: "off" }, authorization: { mode: "off" } },
  });
  await using gateway = await startGateway({ policy, upstream: upstream.url });
  const response = await gateway.fetch("/api/v1/checkout/orders", CHECKOUT);
  await response.body?.cancel();
  assert.equal(response.status, 200);
  assert.equal(upstream.received.length, 1);
});
