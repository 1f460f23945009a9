import assert from "node:assert/strict";
import { createStore } from "../../../src/store/mod.ts";
import { type StoredResponse, StoreUnavailableError } from "../../../src/store/types.ts";
import { storeSection } from "../../../src/sections/sections.ts";
import { storeContract } from "../../support/store_contract.ts";
import { assertNoDecision, idem, limit } from "../../support/store_contract.ts";
import {
  ownRedisStore,
  redisClient,
  redisUrl,
  startRedisServer,
  uniquePrefix,
  WITHOUT_REDIS,
} from "../../support/redis.ts";
import { retryUntil } from "../../support/wait.ts";
import { keepAliveSeconds } from "../../support/tcp_timers.ts";
import { createCa, issue, privateKeyPem } from "../../support/pki.ts";
import { runTrusting } from "../../support/trusting.ts";
import { KEEPALIVE_MS } from "../../../src/store/redis.ts";

function section(url: string, timeout = "500ms") {
  return storeSection.parse({ kind: "redis", url, prefix: uniquePrefix(), timeout });
}

storeContract("redisStore", () => createStore(section(redisUrl())), { ignore: WITHOUT_REDIS });

Deno.test({
  name: "redisStore's connection starts TCP keep-alive probes after 5 s idle (node-redis 6: 30 s)",
  ignore: WITHOUT_REDIS,
  async fn() {
    await using own = await ownRedisStore();
    const { redis, store } = own;
    await store.decide({ limits: [limit()] });
    const timers = keepAliveSeconds(redis.port);
    assert.equal(timers.length, 1, `one connection with a keep-alive timer: ${timers}`);
    assert.ok(timers[0] <= KEEPALIVE_MS / 1000, `keep-alive in ${timers[0]} s`);
  },
});

Deno.test({
  name:
    "redisStore speaks TLS to a rediss:// URL, and refuses a Redis whose certificate the runtime does not trust",
  ignore: WITHOUT_REDIS,
  async fn() {
    const ca = await createCa("Test Redis CA");
    const server = await issue(ca, { domains: ["localhost"], orgId: null });
    const tls = { cert: server.pem, key: await privateKeyPem(server) };
    await using redis = await startRedisServer({ tls });
    const prefix = uniquePrefix();
    // The runtime's trust store is read at start-up: a child process with Redis's CA in it.
    const printed = await runTrusting(
      ca.pem,
      `import { createStore } from "${new URL("../../../src/store/mod.ts", import.meta.url)}";
      import { storeSection } from "${new URL(
        "../../../src/sections/sections.ts",
        import.meta.url,
      )}";
      const store = await createStore(storeSection.parse(
        { kind: "redis", url: "${redis.tlsUrl}", prefix: "${prefix}", timeout: "2s" },
      ));
      const verdict = await store.decide({ limits: [], idempotency: {
        key: "idem:tpp:1", mode: "replay", fingerprint: "f", token: "t", enforce: true,
        inflightMs: 60000, retentionMs: 60000 } });
      console.log(verdict.idempotency.outcome);
      await store.close();`,
    );
    assert.equal(printed, "claimed");
    // Written to this Redis (read back over its plain port).
    const client = await redisClient(redis.url);
    try {
      assert.deepEqual(await client.keys(`${prefix}*`), [`${prefix}idem:tpp:1`]);
    } finally {
      client.destroy();
    }
    // Without that CA the certificate is refused: no decision is made over that connection.
    await assertNoDecision(await createStore(section(redis.tlsUrl!)));
  },
});

Deno.test({
  name:
    "redisStore authenticates with the URL's user and password, and a wrong or missing one gets no decision",
  ignore: WITHOUT_REDIS,
  async fn() {
    await using redis = await startRedisServer();
    const admin = await redisClient(redis.url);
    try {
      // An ACL user of the gateway's own, and a password for the default user (new connections).
      await admin.sendCommand(["ACL", "SETUSER", "gateway", "on", ">gw-s3cret", "~*", "+@all"]);
      await admin.sendCommand(["CONFIG", "SET", "requirepass", "default-s3cret"]);
    } finally {
      admin.destroy();
    }
    const at = (credentials: string) => redis.url.replace("redis://", `redis://${credentials}`);
    for (const credentials of ["gateway:gw-s3cret@", ":default-s3cret@"]) {
      const store = await createStore(section(at(credentials)));
      try {
        const verdict = await store.decide({ idempotency: idem(), limits: [limit()] });
        assert.equal(verdict.idempotency?.outcome, "claimed", credentials);
      } finally {
        await store.close();
      }
    }
    for (const credentials of ["gateway:wrong@", ""]) {
      const error = await assertNoDecision(await createStore(section(at(credentials))));
      // Refused by Redis's answer, not ended by the store's deadline.
      assert.doesNotMatch(error.message, /No answer within/, credentials);
    }
  },
});

Deno.test({
  name: "redisStore fails fast while Redis is down and recovers after its restart",
  ignore: WITHOUT_REDIS,
  async fn() {
    await using own = await ownRedisStore({ ready: true });
    const { redis, store } = own;
    await redis.kill();
    const error = await assertNoDecision(store, { close: false });
    // Failed on the lost connection, not at the store's deadline.
    assert.doesNotMatch(error.message, /No answer within/);
    await redis.start();
    // A fresh Redis has no scripts: EVALSHA answers NOSCRIPT and the store falls back to EVAL.
    const before = store.stats.roundTrips;
    const verdict = await retryUntil(
      () => store.decide({ idempotency: idem(), limits: [limit()] }),
      5000,
    );
    assert.equal(verdict.idempotency?.outcome, "claimed");
    assert.ok(store.stats.errors > 0);
    assert.ok(store.stats.roundTrips - before >= 2);
  },
});

Deno.test({
  name: "redisStore gives up on a Redis that does not answer after its timeout",
  ignore: WITHOUT_REDIS,
  async fn() {
    await using own = await ownRedisStore({ timeout: "200ms", ready: true });
    const { redis, store } = own;
    redis.freeze(true);
    const started = performance.now();
    await assert.rejects(store.decide({ limits: [limit()] }), (error: unknown) => {
      assert.ok(error instanceof StoreUnavailableError);
      assert.equal(error.message, "No answer within 200 ms");
      return true;
    });
    // The message names the deadline: the deadline, not an error, ended the wait.
    assert.ok(performance.now() - started >= 150, "not before the deadline");
    redis.freeze(false);
    await retryUntil(() => store.decide({ limits: [limit()] }), 3000);
  },
});

Deno.test({
  name: "redisStore sends a known script as EVALSHA: one round trip a decision",
  ignore: WITHOUT_REDIS,
  async fn() {
    await using own = await ownRedisStore({ ready: true });
    const { store } = own;
    for (let i = 0; i < 3; i++) {
      const before = store.stats.roundTrips;
      await store.decide({ idempotency: idem(), limits: [limit()] });
      assert.equal(store.stats.roundTrips - before, 1);
    }
    const before = store.stats.roundTrips;
    await store.complete({ key: "idem:x", token: "t", action: "release", retentionMs: 1000 });
    await store.complete({ key: "idem:x", token: "t", action: "release", retentionMs: 1000 });
    assert.equal(store.stats.roundTrips - before, 3, "EVAL once, then EVALSHA");
    assert.equal(store.stats.errors, 0);
  },
});

Deno.test({
  name: "redisStore logs an outage at most once a second, with the failed operation",
  ignore: WITHOUT_REDIS,
  async fn() {
    await using own = await ownRedisStore({ ready: true });
    const { redis, store, log } = own;
    const errorsBefore = store.stats.errors;
    await redis.kill();
    await assert.rejects(store.decide({ limits: [limit()] }), StoreUnavailableError);
    await assert.rejects(store.get("k"), StoreUnavailableError);
    await assert.rejects(store.put("k", "v", 1000), StoreUnavailableError);
    const outages = () => log.lines.filter((line) => line.msg === "store unavailable");
    assert.equal(outages().length, 1, "one line within a second");
    assert.deepEqual(Object.keys(outages()[0]).sort(), [
      "error",
      "level",
      "msg",
      "operation",
      "store",
    ]);
    assert.equal(outages()[0].store, "redis");
    assert.equal(outages()[0].operation, "decide");
    assert.equal(store.stats.errors - errorsBefore, 3);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await assert.rejects(store.refund("c"), StoreUnavailableError);
    assert.equal(outages().length, 2);
    assert.equal(outages()[1].operation, "refund");
  },
});

Deno.test({
  name: "redisStore fails every call after an outage with the store's error, naming the operation",
  ignore: WITHOUT_REDIS,
  async fn() {
    await using own = await ownRedisStore({ ready: true });
    const { redis, store, log } = own;
    // A script error (a record of the wrong type) is the client's own error: wrapped, with the
    // operation and its cause.
    await store.put("wrong-type", "v", 10_000);
    const trips = store.stats.roundTrips;
    await assert.rejects(
      store.decide({ idempotency: idem({ key: "wrong-type" }), limits: [] }),
      (error: unknown) => {
        assert.ok(error instanceof StoreUnavailableError);
        assert.match(error.message, /^The store failed on decide: WRONGTYPE /);
        assert.ok(error.cause instanceof Error);
        assert.equal(
          error.cause.message,
          error.message.slice("The store failed on decide: ".length),
        );
        return true;
      },
    );
    assert.match(String(log.lines.at(-1)?.error), /^WRONGTYPE /);
    assert.equal(store.stats.roundTrips - trips, 1, "only NOSCRIPT falls back to EVAL");
    await redis.kill();
    const calls: [string, () => Promise<unknown>][] = [
      ["complete", () => store.complete({ ...idem(), action: "release", retentionMs: 1000 })],
      ["get", () => store.get("k")],
      ["put", () => store.put("k", "v", 1000)],
      ["delete", () => store.delete("k")],
    ];
    for (const [operation, call] of calls) {
      // One log line a second: wait for the next.
      await new Promise((resolve) => setTimeout(resolve, 1010));
      await assert.rejects(call(), StoreUnavailableError, operation);
      const line = log.lines.filter((l) => l.msg === "store unavailable").at(-1);
      assert.equal(line?.operation, operation);
    }
  },
});

Deno.test({
  name: "redisStore closes its connection on close()",
  ignore: WITHOUT_REDIS,
  async fn() {
    await using own = await ownRedisStore({ ready: true });
    const { store } = own;
    await store.close();
    await assert.rejects(store.decide({ limits: [limit()] }), StoreUnavailableError);
  },
});

Deno.test({
  name:
    "redisStore decides one turn's decisions in one script call, each as if alone: a repeat, a limit, a replay",
  ignore: WITHOUT_REDIS,
  async fn() {
    await using own = await ownRedisStore();
    const { store } = own;
    const kept = idem({ key: "idem:tpp:done" });
    const first = await store.decide({ idempotency: kept, limits: [] });
    assert.equal(first.idempotency?.outcome, "claimed");
    await store.complete({
      key: kept.key,
      token: kept.token,
      action: "done",
      retentionMs: 60_000,
      response: { status: 201, headers: [], body: "{}" },
    });
    const trips = store.stats.roundTrips;
    // Asked for in one turn: the same X-Request-ID twice, a limit of 3 five times, and a replay
    // between them (a decision that stops early must not shift the next one's keys).
    const verdicts = await Promise.all([
      store.decide({ idempotency: idem({ key: "idem:tpp:a", mode: "unique" }), limits: [] }),
      store.decide({ idempotency: idem({ key: "idem:tpp:a", mode: "unique" }), limits: [] }),
      ...Array.from({ length: 5 }, () => store.decide({ limits: [limit()] })),
      store.decide({ idempotency: { ...kept, token: "another" }, limits: [limit()] }),
      store.decide({ limits: [limit({ key: "rl:other" })] }),
    ]);
    assert.equal(store.stats.roundTrips - trips, 1, "one script call for the turn");
    assert.deepEqual(verdicts.slice(0, 2).map((v) => v.idempotency?.outcome), [
      "claimed",
      "duplicate",
    ]);
    assert.deepEqual(
      verdicts.slice(2, 7).map((v) => v.limits[0].allowed),
      [true, true, true, false, false],
    );
    assert.equal(verdicts[7].idempotency?.outcome, "replay");
    assert.equal(verdicts[7].idempotency?.response?.status, 201);
    assert.deepEqual(verdicts[8].limits.map((l) => l.allowed), [true]);
    assert.equal(verdicts[8].limits[0].remaining, 2);
  },
});

Deno.test({
  name: "redisStore reads one turn's keys in one MGET, each its own value",
  ignore: WITHOUT_REDIS,
  async fn() {
    await using own = await ownRedisStore();
    const { store } = own;
    await store.put("scope:a", "A", 60_000);
    await store.put("scope:b", "B", 60_000);
    const trips = store.stats.roundTrips;
    const values = await Promise.all(
      ["scope:a", "scope:missing", "scope:b", "scope:a"].map((key) => store.get(key)),
    );
    assert.equal(store.stats.roundTrips - trips, 1, "one MGET for the turn");
    assert.deepEqual(values, ["A", undefined, "B", "A"]);
  },
});

Deno.test({
  name: "redisStore writes one turn's completions and puts in one script call, each as if alone",
  ignore: WITHOUT_REDIS,
  async fn() {
    await using own = await ownRedisStore();
    const { store } = own;
    const mine = idem({ key: "idem:mine" });
    const theirs = idem({ key: "idem:theirs" });
    for (const part of [mine, theirs]) {
      assert.equal(
        (await store.decide({ idempotency: part, limits: [] })).idempotency?.outcome,
        "claimed",
      );
    }
    const response: StoredResponse = {
      status: 201,
      headers: [["content-type", "application/json"]],
      body: "e30=",
    };
    await store.put("warm", "the script loaded (EVAL after NOSCRIPT once)", 1000);
    const trips = store.stats.roundTrips;
    await Promise.all([
      store.complete({ ...mine, action: "done", response }),
      // Another request's token: its record stays in flight.
      store.complete({ ...theirs, token: "not-the-owner", action: "done", response }),
      store.put("owner:payment:p-1", "PSDGE-NBG-1", 60_000),
      store.put("owner:payment:p-2", "PSDGE-NBG-2", 60_000),
    ]);
    assert.equal(store.stats.roundTrips - trips, 1, "one script call for the turn's writes");
    assert.deepEqual(
      await Promise.all(["owner:payment:p-1", "owner:payment:p-2"].map((key) => store.get(key))),
      ["PSDGE-NBG-1", "PSDGE-NBG-2"],
    );
    const replay = await store.decide({ idempotency: mine, limits: [] });
    assert.equal(replay.idempotency?.outcome, "replay");
    assert.deepEqual(replay.idempotency?.response, response);
    const still = await store.decide({ idempotency: theirs, limits: [] });
    assert.equal(still.idempotency?.outcome, "inflight");
  },
});
