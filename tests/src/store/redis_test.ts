import assert from "node:assert/strict";
import { createStore } from "../../../src/store/mod.ts";
import { StoreUnavailableError } from "../../../src/store/types.ts";
import { storeSection } from "../../../src/policy/sections.ts";
import { storeContract } from "../../support/store_contract.ts";
import { idem, limit } from "../../support/store_contract.ts";
import { redisUrl, startRedisServer, uniquePrefix, WITHOUT_REDIS } from "../../support/redis.ts";

function section(url: string, timeout = "500ms") {
  return storeSection.parse({ kind: "redis", url, prefix: uniquePrefix(), timeout });
}

storeContract("redisStore", () => createStore(section(redisUrl())), { ignore: WITHOUT_REDIS });

async function until<T>(fn: () => Promise<T>, ms: number): Promise<T> {
  const end = Date.now() + ms;
  while (true) {
    try {
      return await fn();
    } catch (error) {
      if (Date.now() > end) throw error;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

Deno.test({
  name: "redisStore fails fast while Redis is down and recovers after its restart",
  ignore: WITHOUT_REDIS,
  async fn() {
    await using redis = await startRedisServer();
    const store = await createStore(section(redis.url));
    try {
      await until(() => store.decide({ limits: [limit()] }), 3000);
      await redis.kill();
      const started = performance.now();
      await assert.rejects(store.decide({ limits: [limit()] }), StoreUnavailableError);
      assert.ok(performance.now() - started < 1000, "bounded by the timeout, no hang");
      await redis.start();
      // A fresh Redis has no scripts: EVALSHA answers NOSCRIPT and the store falls back to EVAL.
      const before = store.stats.roundTrips;
      const verdict = await until(
        () => store.decide({ idempotency: idem(), limits: [limit()] }),
        5000,
      );
      assert.equal(verdict.idempotency?.outcome, "claimed");
      assert.ok(store.stats.errors > 0);
      assert.ok(store.stats.roundTrips - before >= 2);
    } finally {
      await store.close();
    }
  },
});

Deno.test({
  name: "redisStore gives up on a Redis that does not answer after its timeout",
  ignore: WITHOUT_REDIS,
  async fn() {
    await using redis = await startRedisServer();
    const store = await createStore(section(redis.url, "200ms"));
    try {
      await until(() => store.decide({ limits: [limit()] }), 3000);
      redis.freeze(true);
      const started = performance.now();
      await assert.rejects(store.decide({ limits: [limit()] }), StoreUnavailableError);
      const took = performance.now() - started;
      assert.ok(took >= 150 && took < 1000, `took ${took} ms`);
      redis.freeze(false);
      await until(() => store.decide({ limits: [limit()] }), 3000);
    } finally {
      await store.close();
    }
  },
});
