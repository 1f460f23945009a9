/**
 * `store.replicas` (WAIT) against a real replica (`redis-server --replicaof`): a claim counts once
 * the replica holds it; while the replica cannot acknowledge, the decision fails as a store
 * outage instead of resting on the master alone, which a failover would lose.
 */
import assert from "node:assert/strict";
import { redisStore } from "../../../src/store/redis.ts";
import { storeSection } from "../../../src/policy/sections.ts";
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

/** A free port below Linux's ephemeral range, as tests/support/redis.ts picks them. */
function freePort(): number {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    try {
      Deno.listen({ hostname: "127.0.0.1", port }).close();
      return port;
    } catch {
      // Taken: try another.
    }
  }
}

/** A replica of `master`, up once its link to the master is. */
async function startReplica(master: RedisProcess) {
  const port = freePort();
  // A replica writes the master's snapshot to its directory: a temporary one.
  const dir = await Deno.makeTempDir({ prefix: "redis-replica-" });
  const child = new Deno.Command("redis-server", {
    args: [
      ...["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
      ...["--dir", dir, "--replicaof", "127.0.0.1", String(master.port)],
    ],
    stdout: "null",
    stderr: "null",
  }).spawn();
  const url = `redis://127.0.0.1:${port}`;
  const client = await retryUntil(() => redisClient(url), 5000);
  await retryUntil(async () => {
    const info = String(await client.sendCommand(["INFO", "replication"]));
    if (!info.includes("master_link_status:up")) throw new Error(info);
  }, 10_000);
  return {
    client,
    freeze: (frozen: boolean) => child.kill(frozen ? "SIGSTOP" : "SIGCONT"),
    async [Symbol.asyncDispose]() {
      child.kill("SIGCONT");
      await client.close().catch(() => {});
      child.kill("SIGKILL");
      await child.status;
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
