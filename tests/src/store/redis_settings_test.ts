/**
 * A Redis that may forget executed X-Request-IDs is heard: its settings are read at start and on
 * each new connection (real redis-server processes), warned of in the log and in the store's
 * condition, and a server that refuses CONFIG is said to be unknown rather than taken as sound.
 */
import assert from "node:assert/strict";
import { memoryLogger } from "../../../src/lib/log.ts";
import { storeSection } from "../../../src/sections/sections.ts";
import { ownRedisStore, redisClient, WITHOUT_REDIS } from "../../support/redis.ts";
import { waitFor } from "../../support/wait.ts";
import { limit } from "../../support/store_contract.ts";

const FORGET = "store may forget executed X-Request-IDs";

Deno.test({
  name: "redisStore warns of a Redis with appendonly no at start: log line and condition",
  ignore: WITHOUT_REDIS,
  async fn() {
    await using own = await ownRedisStore();
    const { redis, store, log } = own;
    const condition = store.condition!();
    assert.equal(condition.settings?.appendonly, "no");
    assert.equal(condition.settings?.["maxmemory-policy"], "noeviction");
    assert.equal(condition.warnings.length, 1);
    assert.match(condition.warnings[0], /has appendonly no: .*\(set appendonly yes\)/);
    const lines = log.lines.filter((line) => line.msg === FORGET);
    assert.equal(lines.length, 1);
    assert.equal(lines[0].level, "error");
    assert.equal(lines[0].node, `127.0.0.1:${redis.port}`);
  },
});

Deno.test({
  name:
    "redisStore is quiet about a durable Redis that never evicts, and reads the settings again on reconnect (an evicting policy set meanwhile is warned of)",
  ignore: WITHOUT_REDIS,
  async fn() {
    await using own = await ownRedisStore({ server: { durable: true } });
    const { redis, store, log } = own;
    const admin = await redisClient(redis.url);
    try {
      assert.deepEqual(store.condition!().warnings, []);
      assert.equal(store.condition!().settings?.appendonly, "yes");
      assert.equal(log.lines.filter((line) => line.msg === FORGET).length, 0);
      await admin.configSet("maxmemory-policy", "volatile-lru");
      // The connection is lost (as in a failover): the next command connects anew.
      await admin.sendCommand(["CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"]);
      await waitFor(() => {
        store.decide({ limits: [limit()] }).catch(() => {});
        return store.condition!().warnings.length > 0;
      });
      const warnings = store.condition!().warnings;
      assert.equal(warnings.length, 1);
      assert.match(
        warnings[0],
        /has maxmemory-policy volatile-lru: .*\(set maxmemory-policy noeviction\)/,
      );
      assert.equal(log.lines.filter((line) => line.msg === FORGET).length, 1);
    } finally {
      await admin.close();
    }
  },
});

Deno.test({
  name:
    "redisStore says the settings are unknown when Redis refuses CONFIG (as managed ones do), without a warning",
  ignore: WITHOUT_REDIS,
  async fn() {
    await using own = await ownRedisStore({
      server: { args: ["--rename-command", "CONFIG", ""] },
    });
    const { store, log } = own;
    const condition = store.condition!();
    assert.deepEqual(condition.warnings, []);
    assert.match(condition.unknown ?? "", /refused CONFIG GET/);
    const line = log.lines.find((l) => l.msg === "store settings unknown");
    assert.ok(line, "logged once");
    assert.equal(line.level, "warn");
  },
});

Deno.test({
  name: "redisClusterStore reads every master's settings and warns of each that may forget",
  ignore: WITHOUT_REDIS,
  async fn() {
    const { startRedisCluster } = await import("../../support/redis_cluster.ts");
    const { redisClusterStore } = await import("../../../src/store/redis_cluster.ts");
    await using cluster = await startRedisCluster();
    const log = memoryLogger();
    const store = await redisClusterStore(
      storeSection.parse({ kind: "redis", cluster: true, url: cluster.urls[0], timeout: "500ms" }),
      { log },
    );
    try {
      const condition = store.condition!();
      assert.equal(condition.warnings.length, 3, condition.warnings.join("\n"));
      for (const url of cluster.urls) {
        const node = new URL(url).host;
        assert.equal(condition.settings?.[`${node} appendonly`], "no");
        assert.ok(
          condition.warnings.some((w) => w.startsWith(`Redis "${node}" has appendonly no`)),
        );
      }
      assert.equal(log.lines.filter((line) => line.msg === FORGET).length, 3);
    } finally {
      await store.close();
    }
  },
});
