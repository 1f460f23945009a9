/**
 * One answer path: the core's answer, a replay of a kept answer, a cached answer and the gateway's
 * own error all pass the same answer steps (src/core/answer.ts), so a rule on the answer holds on
 * every path. Driven through the real gateway in front of a real upstream on 127.0.0.1.
 */
import assert from "node:assert/strict";
import { startGateway } from "../support/gateway.ts";
import { passthroughPolicy } from "../support/policies.ts";
import { startUpstream } from "../support/upstream.ts";
import { initiationHeaders, singlePayment } from "../support/requests.ts";
import { tokenIssuer } from "../support/tpp_tokens.ts";

const issuer = await tokenIssuer();
const PAYMENTS = "/v1/payments/sepa-credit-transfers";

/**
 * What every answer must show, whoever made it. The RateLimit headers show a count, on the answer
 * to every request the limits counted (the store counts no replay, nor a reused id it refuses).
 */
function assertAnswerRules(
  response: Response,
  { requestId, body, what, counted }: {
    requestId: string;
    body: string;
    what: string;
    counted: boolean;
  },
) {
  assert.equal(response.headers.get("x-request-id"), requestId, `${what}: X-Request-ID echoed`);
  assert.equal(response.headers.get("x-content-type-options"), "nosniff", `${what}: nosniff`);
  assert.equal(
    response.headers.has("ratelimit-limit"),
    counted,
    `${what}: the rate limit's headers`,
  );
  assert.ok(!body.includes("core.internal"), `${what}: no internal host in the body`);
  assert.ok(!body.includes("/psd2/v1"), `${what}: no upstream prefix in the body: ${body}`);
  const location = response.headers.get("location");
  assert.ok(location === null || location.startsWith("/v1/"), `${what}: Location ${location}`);
}

Deno.test("every answer (core, replay, cache, local error) passes the same answer steps", async () => {
  await using core = startUpstream((_request, recorded) => {
    const self = `http://core.internal:9000${recorded.path}`;
    const headers = { "content-type": "Application/JSON; charset=UTF-8" };
    if (recorded.method === "POST") {
      return new Response(
        JSON.stringify({
          transactionStatus: "RCVD",
          paymentId: crypto.randomUUID(),
          _links: { self: { href: self }, scaRedirect: { href: "https://sca.bank.test/x" } },
        }),
        { status: 201, headers: { ...headers, location: self } },
      );
    }
    return new Response(
      JSON.stringify({ products: [], _links: { self: { href: self } } }),
      { status: 200, headers },
    );
  });
  await using gateway = await startGateway({
    policy: passthroughPolicy({
      defaults: {
        bearer_token: issuer.options,
        idempotency: { mode: "enforce", writes: "replay" },
        rate_limit: {
          mode: "enforce",
          limits: { per_client: { key: ["client_ip"], limit: 100, window: "1h" } },
        },
        links: { upstream_origins: ["http://core.internal:9000"] },
      },
      groups: { products: { catalogue_cache: { ttl: "60s" } } },
    }),
    upstream: core.url,
  });
  const tpp = await issuer.headers("PSDGE-NBG-000001");
  const send = async (path: string, init: RequestInit, id: string) => {
    const response = await gateway.fetch(path, {
      ...init,
      headers: { ...init.headers as Record<string, string>, "x-request-id": id },
    });
    return { response, body: await response.text() };
  };

  // The core's answer, then the same request's replay: the same body, the rules on both.
  const payment = { method: "POST", headers: { ...initiationHeaders(), ...tpp } };
  const id = crypto.randomUUID();
  const first = await send(PAYMENTS, { ...payment, body: JSON.stringify(singlePayment()) }, id);
  assert.equal(first.response.status, 201, first.body);
  assertAnswerRules(first.response, {
    requestId: id,
    body: first.body,
    what: "core",
    counted: true,
  });
  const replay = await send(PAYMENTS, { ...payment, body: JSON.stringify(singlePayment()) }, id);
  assert.equal(replay.response.headers.get("x-idempotent-replay"), "true");
  assert.equal(replay.body, first.body);
  assert.equal(replay.response.headers.get("location"), first.response.headers.get("location"));
  assertAnswerRules(replay.response, {
    requestId: id,
    body: replay.body,
    what: "replay",
    counted: false,
  });

  // A local error: the same id with another body is the gateway's own 400.
  const changed = singlePayment();
  (changed.instructedAmount as Record<string, string>).amount = "1.00";
  const refused = await send(PAYMENTS, { ...payment, body: JSON.stringify(changed) }, id);
  assert.equal(refused.response.status, 400, refused.body);
  assertAnswerRules(refused.response, {
    requestId: id,
    body: refused.body,
    what: "local error",
    counted: false,
  });

  // The catalogue: the core's answer, then the cache's, rewritten alike.
  const read = { headers: { accept: "application/json" } };
  const miss = await send("/v1/products/en", read, crypto.randomUUID());
  assert.equal(miss.response.status, 200, miss.body);
  const hitId = crypto.randomUUID();
  const hit = await send("/v1/products/en", read, hitId);
  assert.equal(hit.body, miss.body);
  assert.ok(hit.response.headers.get("etag"));
  assertAnswerRules(hit.response, {
    requestId: hitId,
    body: hit.body,
    what: "cache",
    counted: true,
  });
  assert.ok(hit.body.includes('"href":"/v1/products/en"'), hit.body);

  assert.equal(core.received.filter((r) => r.method === "POST").length, 1, "executed once");
  assert.equal(core.received.filter((r) => r.method === "GET").length, 1, "read once");
});
