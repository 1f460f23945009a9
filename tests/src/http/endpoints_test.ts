import assert from "node:assert/strict";
import { startGateway } from "../../support/gateway.ts";
import { passthroughPolicy } from "../../support/policies.ts";
import { closedPort, startUpstream } from "../../support/upstream.ts";
import { WITHOUT_REDIS } from "../../support/redis.ts";
import { emptyPayment, idempotentGateway, readyz } from "../../support/readiness.ts";

/** A Redis store nothing answers on (connection refused). */
function deadRedis() {
  return { kind: "redis" as const, url: `redis://127.0.0.1:${closedPort()}`, timeout: "200ms" };
}

Deno.test("/readyz names each dependency's state when all are up", async () => {
  await using upstream = startUpstream();
  await using gateway = await idempotentGateway(upstream.url);
  const { status, body } = await readyz(gateway);
  assert.equal(status, 200);
  assert.equal(body.status, "ready");
  assert.equal(body.dependencies.upstream.state, "up");
  const { capacity, ...store } = body.dependencies.store;
  assert.deepEqual(store, { state: "up", kind: "memory", required_by: ["idempotency"] });
  assert.equal(capacity.max_entries, 100_000);
  assert.equal(capacity.refused, 0);
  assert.deepEqual(body.dependencies.circuit, { state: "none" });
  assert.ok(!Number.isNaN(Date.parse(body.checked)));
});

Deno.test({
  name: "/readyz is 503 while the store is down and a check fails closed without it",
  ignore: WITHOUT_REDIS,
  async fn() {
    await using upstream = startUpstream();
    await using gateway = await idempotentGateway(upstream.url, {
      sections: { store: deadRedis() },
    });
    const { status, body } = await readyz(gateway);
    assert.equal(status, 503);
    assert.equal(body.status, "not ready");
    assert.equal(body.dependencies.upstream.state, "up");
    assert.equal(body.dependencies.store.state, "down");
    assert.equal(body.dependencies.store.kind, "redis");
    assert.deepEqual(body.dependencies.store.required_by, ["idempotency"]);
    assert.ok(body.dependencies.store.error);
    // What a TPP gets meanwhile: the 503 that readiness now announces.
    const payment = await emptyPayment(gateway);
    assert.equal(payment.status, 503);
    assert.equal((await payment.json()).tppMessages[0].code, "STORE_UNAVAILABLE");
  },
});

Deno.test({
  name: "/readyz stays 200 while the store is down if every check fails open",
  ignore: WITHOUT_REDIS,
  async fn() {
    await using upstream = startUpstream();
    await using gateway = await idempotentGateway(upstream.url, {
      sections: { store: deadRedis() },
      fail: "open",
    });
    const { status, body } = await readyz(gateway);
    assert.equal(status, 200);
    assert.equal(body.status, "degraded", "served, and said");
    assert.equal(body.dependencies.store.state, "down");
    assert.deepEqual(body.dependencies.store.required_by, []);
  },
});

Deno.test("/readyz is 503 when the upstream cannot be reached, and says so", async () => {
  await using gateway = await startGateway({
    policy: passthroughPolicy(),
    upstream: `http://127.0.0.1:${closedPort()}`,
  });
  const { status, body } = await readyz(gateway);
  assert.equal(status, 503);
  assert.equal(body.dependencies.upstream.state, "down");
  assert.equal(body.dependencies.store.state, "up");
});
