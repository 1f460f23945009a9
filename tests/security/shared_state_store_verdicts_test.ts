/**
 * Attacks on shared state through the store's answers: a verdict the gateway does not know
 * (from an Upstash-compatible server that ignores `Upstash-Encoding: base64`, or from any store
 * that answers out of shape) must never let a request through as if the store had said "go".
 */
import assert from "node:assert/strict";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { type LevelInput, passthroughPolicy, type PolicyInput } from "../support/policies.ts";
import { type FaultyUpstream, startFaultyUpstream } from "../support/faulty_upstream.ts";
import { initiationHeaders, singlePayment } from "../support/requests.ts";
import { redisUrl, uniquePrefix, WITHOUT_REDIS } from "../support/redis.ts";
import { startUpstashServer } from "../support/upstash_server.ts";
import { tokenIssuer } from "../support/tpp_tokens.ts";
import { MemoryStore } from "../../src/store/memory.ts";
import type { Store, Verdict } from "../../src/store/types.ts";

const PAYMENTS = "/v1/payments/sepa-credit-transfers";
const TPP = "PSDGE-NBG-123456";
const issuer = await tokenIssuer();

function policy(sections: PolicyInput = {}, defaults: LevelInput = {}) {
  return passthroughPolicy(sections, {
    defaults: {
      bearer_token: issuer.options,
      idempotency: { mode: "enforce", fail: "closed" },
      ...defaults,
    },
  });
}

async function pay(gateway: TestGateway, id: string, amount = "123.50") {
  const body = singlePayment();
  (body.instructedAmount as Record<string, string>).amount = amount;
  const response = await gateway.fetch(PAYMENTS, {
    method: "POST",
    headers: { ...initiationHeaders({ "x-request-id": id }), ...await issuer.headers(TPP) },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    replay: response.headers.get("x-idempotent-replay"),
    body: await response.json(),
  };
}

/** The gateway on an upstash store whose server ignores `Upstash-Encoding`. */
async function onIgnoringServer(fn: (gateway: TestGateway, core: FaultyUpstream) => Promise<void>) {
  await using server = await startUpstashServer(redisUrl(), { encoding: "ignore" });
  await using core = startFaultyUpstream();
  const store = {
    kind: "upstash" as const,
    url: server.url,
    token: server.token,
    prefix: uniquePrefix(),
    timeout: "1000ms",
  };
  await using gateway = await startGateway({ policy: policy({ store }), upstream: core.url });
  await fn(gateway, core);
}

Deno.test({
  name:
    "idempotency() executes a payment once through an Upstash server that ignores Upstash-Encoding",
  ignore: WITHOUT_REDIS,
  async fn() {
    await onIgnoringServer(async (gateway, core) => {
      const id = crypto.randomUUID();
      const first = await pay(gateway, id);
      assert.equal(first.status, 201, JSON.stringify(first.body));
      const again = await pay(gateway, id);
      assert.equal(again.status, 201);
      assert.equal(again.replay, "true", "the retry gets the stored answer");
      assert.deepEqual(again.body, first.body);
      assert.equal(core.executions(id), 1, "the core executed the payment once");
    });
  },
});

Deno.test({
  name:
    "idempotency() refuses another payment under a used X-Request-ID through an Upstash server that ignores Upstash-Encoding",
  ignore: WITHOUT_REDIS,
  async fn() {
    await onIgnoringServer(async (gateway, core) => {
      const id = crypto.randomUUID();
      assert.equal((await pay(gateway, id)).status, 201);
      const other = await pay(gateway, id, "999.00");
      assert.equal(other.status, 400, JSON.stringify(other.body));
      assert.equal(other.body.tppMessages[0].code, "FORMAT_ERROR");
      assert.equal(other.body.tppMessages[0].path, "X-Request-ID");
      assert.equal(core.executions(id), 1, "the other payment never reached the core");
    });
  },
});

/** A memory store whose verdicts pass through `tamper` first. */
function tamperedStore(tamper: (verdict: Verdict) => Verdict): Store {
  const inner = new MemoryStore();
  return {
    kind: "memory",
    stats: inner.stats,
    decide: async (decision) => tamper(await inner.decide(decision)),
    complete: (completion) => inner.complete(completion),
    refund: (counter) => inner.refund(counter),
    put: (key, value, ttlMs) => inner.put(key, value, ttlMs),
    get: (key) => inner.get(key),
    delete: (key) => inner.delete(key),
    close: () => inner.close(),
  };
}

async function withTamperedStore(
  tamper: (verdict: Verdict) => Verdict,
  defaults: Record<string, unknown>,
  fn: (gateway: TestGateway, core: FaultyUpstream) => Promise<void>,
) {
  await using core = startFaultyUpstream();
  await using gateway = await startGateway({
    policy: policy({}, defaults),
    upstream: core.url,
    services: { store: tamperedStore(tamper) },
  });
  await fn(gateway, core);
}

Deno.test("idempotency() treats an X-Request-ID outcome it does not know as a store failure (fail closed: 503, not executed)", async () => {
  const unknown = (verdict: Verdict): Verdict => ({
    ...verdict,
    idempotency: { outcome: "go-ahead" as "claimed" },
  });
  await withTamperedStore(unknown, {}, async (gateway, core) => {
    const id = crypto.randomUUID();
    const answer = await pay(gateway, id);
    assert.equal(answer.status, 503, JSON.stringify(answer.body));
    assert.equal(answer.body.tppMessages[0].code, "STORE_UNAVAILABLE");
    assert.equal(core.executions(id), 0, "nothing reached the core");
  });
});

Deno.test("rateLimit() treats a verdict without its limits as a store failure (fail closed: 503, not executed)", async () => {
  const limitless = (verdict: Verdict): Verdict => ({ ...verdict, limits: [] });
  const defaults = {
    idempotency: { mode: "off" },
    rate_limit: {
      mode: "enforce",
      fail: "closed",
      limits: { per_tpp: { key: ["tpp"], limit: 1, window: "1m" } },
    },
  };
  await withTamperedStore(limitless, defaults, async (gateway, core) => {
    const id = crypto.randomUUID();
    const answer = await pay(gateway, id);
    assert.equal(answer.status, 503, JSON.stringify(answer.body));
    assert.equal(answer.body.tppMessages[0].code, "STORE_UNAVAILABLE");
    assert.equal(core.executions(id), 0, "nothing reached the core");
  });
});

Deno.test("consentFrequency() treats a read counted but neither allowed nor blocked as a store failure (fail open: forwarded and logged)", async () => {
  const contradictory = (verdict: Verdict): Verdict => ({
    ...verdict,
    blocked: false,
    frequency: { counted: true, allowed: false, limit: 1, used: 1, retryMs: 1000, known: true },
  });
  const defaults = {
    idempotency: { mode: "off" },
    consent_frequency: { mode: "enforce", fail: "open", unknown_consent_limit: 1 },
  };
  await withTamperedStore(contradictory, defaults, async (gateway, core) => {
    const id = crypto.randomUUID();
    const response = await gateway.fetch("/v1/accounts/a1/balances", {
      headers: { "x-request-id": id, "consent-id": "c-1", ...await issuer.headers(TPP) },
    });
    await response.body?.cancel();
    assert.equal(response.status, 201, "fail open: forwarded (the fake core answers 201)");
    assert.equal(core.executions(id), 1);
    assert.ok(
      gateway.log.lines.some((line) => line.msg === "store unavailable, request let through"),
      "the failure is logged",
    );
  });
});
