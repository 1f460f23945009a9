import assert from "node:assert/strict";
import { createStore } from "../../../src/store/mod.ts";
import { type Store, StoreUnavailableError } from "../../../src/store/types.ts";
import { storeSection } from "../../../src/sections/sections.ts";
import { limit, storeContract } from "../../support/store_contract.ts";
import { redisUrl, startRedisServer, uniquePrefix, WITHOUT_REDIS } from "../../support/redis.ts";
import { startUpstashServer, type UpstashServer } from "../../support/upstash_server.ts";

function section(server: { url: string; token: string }, timeout = "1s") {
  return storeSection.parse({
    kind: "upstash",
    url: server.url,
    token: server.token,
    prefix: uniquePrefix(),
    timeout,
  });
}

/** An upstash store whose close also stops its protocol server. */
async function upstashOnSharedRedis(
  encoding: "honour" | "ignore" = "honour",
): Promise<Store> {
  const server = await startUpstashServer(redisUrl(), { encoding });
  const store = await createStore(section(server));
  return {
    ...store,
    stats: store.stats,
    kind: store.kind,
    close: async () => {
      await store.close();
      await server.close();
    },
  } as Store;
}

storeContract("upstashStore", () => upstashOnSharedRedis(), { ignore: WITHOUT_REDIS });
storeContract(
  "upstashStore on a server that ignores Upstash-Encoding",
  () => upstashOnSharedRedis("ignore"),
  { ignore: WITHOUT_REDIS },
);

Deno.test({
  name: "upstashStore refuses a wrong token as an outage, not a success",
  ignore: WITHOUT_REDIS,
  async fn() {
    await using server = await startUpstashServer(redisUrl());
    const store = await createStore(section({ url: server.url, token: "wrong" }));
    await assert.rejects(store.decide({ limits: [limit()] }), StoreUnavailableError);
  },
});

Deno.test({
  name: "upstashStore fails while Redis is down and recovers after its restart",
  ignore: WITHOUT_REDIS,
  async fn() {
    await using redis = await startRedisServer();
    let server: UpstashServer | undefined = await startUpstashServer(redis.url);
    try {
      const store = await createStore(section(server));
      assert.equal((await store.decide({ limits: [limit()] })).limits[0].allowed, true);
      await redis.kill();
      await assert.rejects(store.decide({ limits: [limit()] }), StoreUnavailableError);
      await redis.start();
      const end = Date.now() + 10_000;
      let verdict;
      while (!verdict) {
        verdict = await store.decide({ limits: [limit()] }).catch((error) => {
          if (Date.now() > end) throw error;
          return new Promise<undefined>((r) => setTimeout(() => r(undefined), 50));
        });
      }
      assert.equal(verdict.limits[0].allowed, true);
    } finally {
      await server?.close();
      server = undefined;
    }
  },
});

Deno.test({
  name:
    "upstashStore never asks for Upstash-Encoding: base64, whose answers it would decode blindly",
  ignore: WITHOUT_REDIS,
  async fn() {
    await using server = await startUpstashServer(redisUrl());
    // A hop in front of the protocol server that records what the client asks for.
    const asked: (string | null)[] = [];
    const hop = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
      asked.push(request.headers.get("upstash-encoding"));
      return fetch(server.url + new URL(request.url).pathname, {
        method: "POST",
        headers: request.headers,
        body: request.body,
      });
    });
    try {
      const url = `http://127.0.0.1:${hop.addr.port}`;
      const store = await createStore(section({ url, token: server.token }));
      assert.equal((await store.decide({ limits: [limit()] })).limits[0].allowed, true);
      await store.put("consent:x", "1|4", 1000);
      assert.equal(asked.length, 2);
      assert.deepEqual(asked, [null, null]);
      await store.close();
    } finally {
      await hop.shutdown();
    }
  },
});
