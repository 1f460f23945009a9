/**
 * A signing basket is a write that the PSU authorises like a payment: createSigningBasket gets
 * what initiatePayment gets of the production example (Digest and JWS required, X-Request-ID
 * replay), and the gateway's idempotency and signature checks hold it as they hold a payment.
 */
import assert from "node:assert/strict";
import { PIPELINE } from "../../middleware/mod.ts";
import { parsePolicy } from "../../src/policy/load.ts";
import { createCa } from "../support/pki.ts";
import { gatewayOn, onEachStore } from "../support/each_store.ts";
import { startUpstream } from "../support/upstream.ts";
import { tokenIssuer } from "../support/tpp_tokens.ts";
import { initiationHeaders } from "../support/requests.ts";

const issuer = await tokenIssuer();

Deno.test("the production example asks of createSigningBasket what it asks of initiatePayment", async () => {
  const ca = await createCa();
  const bundle = await Deno.makeTempFile({ suffix: ".pem" });
  await Deno.writeTextFile(bundle, ca.pem);
  const env: Record<string, string> = {
    UPSTREAM_URL: "https://core.bank.internal",
    STORE_URL: "redis://redis.bank.internal:6379",
    QTSP_CA_BUNDLE: bundle,
    OAUTH_JWKS_URL: "https://auth.bank.internal/jwks.json",
    OAUTH_ISSUER: "https://auth.bank.internal",
    METRICS_TOKEN: "a-long-enough-metrics-token",
    OAUTH_INTROSPECTION_URL: "https://auth.bank.internal/introspect",
    OAUTH_CLIENT_SECRET: "a-client-secret",
    TPP_REGISTER_URL: "https://register.bank.internal/tpp_register.json",
  };
  try {
    const file = "config/production.example.yaml";
    const policy = parsePolicy(file, await Deno.readTextFile(file), {
      ...PIPELINE,
      env: (name) => env[name],
    });
    const options = (id: string) => policy.operations.find((r) => r.operation.id === id)!.options;
    const basket = options("createSigningBasket");
    const payment = options("initiatePayment");
    for (
      const key of ["digest", "jws_signature", "http_signature", "idempotency", "tpp_certificate"]
    ) {
      assert.deepEqual(basket[key], payment[key], key);
    }
    assert.equal(basket.jws_signature.required, true);
    assert.equal(basket.digest.required, true);
    assert.equal(basket.basket_scope.mode, "enforce");
  } finally {
    await Deno.remove(bundle);
  }
});

onEachStore(
  "createSigningBasket: unsigned refused, a repeated X-Request-ID replayed",
  async (store) => {
    await using core = startUpstream(() =>
      Response.json({ transactionStatus: "RCVD", basketId: crypto.randomUUID() }, { status: 201 })
    );
    await using gateway = await gatewayOn(store, core, {
      defaults: { bearer_token: issuer.options, idempotency: { mode: "enforce" } },
      groups: {
        baskets: {
          digest: { mode: "enforce", required: true },
          jws_signature: { mode: "enforce", required: true },
        },
      },
    });
    const post = async (headers: Record<string, string>, body: string) => {
      const response = await gateway.fetch("/v1/signing-baskets", {
        method: "POST",
        headers: initiationHeaders({ ...await issuer.headers("tpp-a"), ...headers }),
        body,
      });
      return { status: response.status, headers: response.headers, body: await response.json() };
    };
    const body = JSON.stringify({ paymentIds: ["p-1", "p-2"] });
    const unsigned = await post({ "x-request-id": crypto.randomUUID() }, body);
    assert.equal(unsigned.status, 400);
    assert.equal(unsigned.body.tppMessages[0].path, "Digest");
    assert.equal(core.received.length, 0);

    // Digest and JWS off for the basket group's second half: idempotency alone.
    await using plain = await gatewayOn(store, core, {
      defaults: { bearer_token: issuer.options, idempotency: { mode: "enforce" } },
    });
    const send = async (requestId: string, text: string) => {
      const response = await plain.fetch("/v1/signing-baskets", {
        method: "POST",
        headers: initiationHeaders({ ...await issuer.headers("tpp-a"), "x-request-id": requestId }),
        body: text,
      });
      return { status: response.status, headers: response.headers, body: await response.json() };
    };
    const id = crypto.randomUUID();
    const first = await send(id, body);
    const again = await send(id, body);
    assert.equal(first.status, 201);
    assert.equal(again.status, 201);
    assert.equal(again.headers.get("x-idempotent-replay"), "true");
    assert.equal(again.body.basketId, first.body.basketId);
    assert.equal(core.received.length, 1, "the bank made one basket");
    const other = await send(id, JSON.stringify({ paymentIds: ["p-3"] }));
    assert.equal(other.status, 400);
    assert.equal(other.body.tppMessages[0].code, "FORMAT_ERROR");
    assert.equal(core.received.length, 1);
  },
);
