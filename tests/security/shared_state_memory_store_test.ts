/**
 * Attacks on the in-process store: a flood of new keys must never push out an X-Request-ID record
 * inside its retention (its retry would run again at the core), and large answers must not grow
 * the process without bound.
 */
import assert from "node:assert/strict";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { passthroughPolicy, type PolicyInput } from "../support/policies.ts";
import { startUpstream, type TestUpstream } from "../support/upstream.ts";
import { initiationHeaders, singlePayment } from "../support/requests.ts";
import { tokenIssuer } from "../support/tpp_tokens.ts";
import type { MemoryStore } from "../../src/store/memory.ts";

const PAYMENTS = "/v1/payments/sepa-credit-transfers";
const issuer = await tokenIssuer();

/** A core that creates payments, with `padding` characters of filler in each answer. */
function paymentCore(padding = 0): TestUpstream {
  return startUpstream(() =>
    Response.json({
      transactionStatus: "RCVD",
      paymentId: crypto.randomUUID(),
      filler: "x".repeat(padding),
    }, { status: 201 })
  );
}

/** How many requests with this X-Request-ID reached the core. */
function executions(core: TestUpstream, id: string): number {
  return core.received.filter((r) => r.headers.get("x-request-id") === id).length;
}

function policy(store: Omit<NonNullable<PolicyInput["store"]>, "kind">) {
  return passthroughPolicy({
    store: { kind: "memory", ...store },
    defaults: {
      bearer_token: issuer.options,
      idempotency: { mode: "enforce", fail: "closed", wait: "50ms", poll: "10ms" },
    },
  });
}

async function pay(gateway: TestGateway, id: string, tpp: string) {
  const response = await gateway.fetch(PAYMENTS, {
    method: "POST",
    headers: { ...initiationHeaders({ "x-request-id": id }), ...await issuer.headers(tpp) },
    body: JSON.stringify(singlePayment()),
  });
  return {
    status: response.status,
    replay: response.headers.get("x-idempotent-replay"),
    body: await response.json(),
  };
}

Deno.test("MemoryStore keeps a payment's X-Request-ID through a flood of 250 new ones against 200 entries: the retry is replayed, not executed again", async () => {
  await using core = paymentCore();
  await using gateway = await startGateway({
    policy: policy({ max_entries: 200 }),
    upstream: core.url,
  });
  const victim = crypto.randomUUID();
  assert.equal((await pay(gateway, victim, "PSDGE-NBG-000001")).status, 201);
  const flood: number[] = [];
  const ids: string[] = [];
  for (let i = 0; i < 250; i++) {
    ids.push(crypto.randomUUID());
    flood.push((await pay(gateway, ids[i], "PSDGE-NBG-666666")).status);
  }
  const refused = flood.filter((status) => status === 503).length;
  assert.ok(refused >= 50, `${refused} of the flood refused`);
  assert.deepEqual(new Set(flood), new Set([201, 503]), "fail closed: 503 once the store is full");
  const refusedIds = ids.filter((_, i) => flood[i] === 503);
  assert.equal(
    refusedIds.reduce((n, id) => n + executions(core, id), 0),
    0,
    "nor reached the core",
  );
  const retry = await pay(gateway, victim, "PSDGE-NBG-000001");
  assert.equal(retry.status, 201);
  assert.equal(retry.replay, "true", "the victim's retry gets its stored answer");
  assert.equal(executions(core, victim), 1, "the core executed the victim's payment once");
});

Deno.test("MemoryStore keeps stored answers within max_bytes: 40 answers of 60 KB against 1 MB", async () => {
  await using core = paymentCore(60_000);
  await using gateway = await startGateway({
    policy: policy({ max_bytes: 1_000_000 }),
    upstream: core.url,
  });
  const ids = Array.from({ length: 40 }, () => crypto.randomUUID());
  // Eight TPPs: one alone may hold a quarter of the store (its share, store_shares_test.ts).
  const tpp = (i: number) => `PSDGE-NBG-00000${i % 8}`;
  for (const [i, id] of ids.entries()) assert.equal((await pay(gateway, id, tpp(i))).status, 201);
  const store = gateway.store as MemoryStore;
  assert.ok(store.bytes <= 1_000_000, `${store.bytes} bytes held`);
  // Whatever did not fit is never executed twice: a retry is a replay or a 409, never a 201 anew.
  for (const [i, id] of ids.entries()) {
    const retry = await pay(gateway, id, tpp(i));
    assert.ok(
      retry.replay === "true" || retry.status === 409,
      `${retry.status} ${JSON.stringify(retry.body).slice(0, 200)}`,
    );
    assert.equal(executions(core, id), 1);
  }
  assert.ok(ids.filter((id) => executions(core, id) === 1).length === 40);
});
