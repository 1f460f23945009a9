/**
 * `store.replicas` (WAIT) against a real replica (`redis-server --replicaof`): a claim counts once
 * the replica holds it; while the replica cannot acknowledge, the decision fails as a store
 * outage instead of resting on the master alone, which a failover would lose.
 */
import assert from "node:assert/strict";
import { redisStore } from "../../../src/store/redis.ts";
import { storeSection } from "../../../src/sections/sections.ts";
import { StoreUnavailableError } from "../../../src/store/types.ts";
import {
  redisClient,
  type RedisProcess,
  startRedisServer,
  uniquePrefix,
  WITHOUT_REDIS,
} from "../../support/redis.ts";
import { retryUntil } from "../../support/wait.ts";
import { idem } from "../../support/store_contract.ts";

/** A replica of `master` (a redis-server of its own), up once its link to the master is. */
async function startReplica(master: RedisProcess) {
  // A replica writes the master's snapshot to its directory: a temporary one.
  const dir = await Deno.makeTempDir({ prefix: "redis-replica-" });
  const server = await startRedisServer({
    args: ["--dir", dir, "--replicaof", "127.0.0.1", String(master.port)],
  });
  const client = await redisClient(server.url);
  await retryUntil(async () => {
    const info = String(await client.sendCommand(["INFO", "replication"]));
    if (!info.includes("master_link_status:up")) throw new Error(info);
  }, 10_000);
  return {
    client,
    freeze: server.freeze,
    async [Symbol.asyncDispose]() {
      server.freeze(false);
      await client.close().catch(() => {});
      await server[Symbol.asyncDispose]();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

function section(url: string, replicas: number) {
  return storeSection.parse({
    kind: "redis",
    url,
    prefix: uniquePrefix(),
    timeout: "1s",
    replicas,
    replica_timeout: "200ms",
  });
}

function claim() {
  return { idempotency: idem({ key: `idem:tpp:${crypto.randomUUID()}` }), limits: [] };
}

Deno.test({
  name:
    "redisStore with replicas: 1 counts a claim once the replica holds it, and fails the decision while the replica cannot acknowledge",
  ignore: WITHOUT_REDIS,
  async fn() {
    await using master = await startRedisServer();
    await using replica = await startReplica(master);
    const waiting = await redisStore(section(master.url, 1));
    const plain = await redisStore(section(master.url, 0));
    try {
      const first = claim();
      assert.equal((await waiting.decide(first)).idempotency?.outcome, "claimed");
      // Acknowledged: the replica holds the claim the moment the decision returns.
      const keys = await replica.client.keys("*idem:tpp:*");
      assert.ok(keys.some((k) => k.endsWith(first.idempotency.key)), keys.join(", "));

      replica.freeze(true);
      await assert.rejects(
        waiting.decide(claim()),
        (error) =>
          error instanceof StoreUnavailableError &&
          /0 of 1 replicas acknowledged the write within 200 ms/.test(error.message),
      );
      // Without the option the same claim is acknowledged by the master alone.
      assert.equal((await plain.decide(claim())).idempotency?.outcome, "claimed");
      replica.freeze(false);
      await retryUntil(async () => {
        assert.equal((await waiting.decide(claim())).idempotency?.outcome, "claimed");
      }, 5000);
    } finally {
      replica.freeze(false);
      await waiting.close();
      await plain.close();
    }
  },
});

Deno.test("store.replicas is for redis only, and waits less than the store's timeout", () => {
  assert.throws(() => storeSection.parse({ kind: "memory", replicas: 1 }), /only a redis store/);
  assert.throws(
    () =>
      storeSection.parse({
        kind: "redis",
        url: "redis://127.0.0.1:6379",
        replicas: 1,
        timeout: "100ms",
        replica_timeout: "100ms",
      }),
    /must be below the store's timeout/,
  );
});
