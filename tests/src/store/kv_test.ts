import assert from "node:assert/strict";
import { createStore } from "../../../src/store/mod.ts";
import { kvStore } from "../../../src/store/kv.ts";
import { storeSection } from "../../../src/sections/sections.ts";
import { assertReplayAfterReopen, limit, storeContract } from "../../support/store_contract.ts";
import { tempKv } from "../../support/temp_store.ts";

storeContract("kvStore", tempKv);

Deno.test("kvStore keeps an answer larger than one KV value (64 KiB), and replays it after a reopen", async () => {
  const dir = await Deno.makeTempDir({ prefix: "xs2a-kv-" });
  const path = `${dir}/store.kv`;
  const body = btoa("x".repeat(150_000));
  try {
    await assertReplayAfterReopen(() => kvStore({ path }), {
      status: 201,
      headers: [["x-a", "1"]],
      body,
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("kvStore: two processes' stores on one file count one rate limit (a commit that lost reads again)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "xs2a-kv-" });
  const path = `${dir}/store.kv`;
  // Two handles on one file are two writers, as two isolates on Deno Deploy: the key turns of
  // one process do not order them, only KV's check does.
  const a = await kvStore({ path, timeoutMs: 5000 });
  const b = await kvStore({ path, timeoutMs: 5000 });
  try {
    const shared = limit({ limit: 40, burst: 40, windowMs: 3_600_000 });
    const verdicts = await Promise.all(
      Array.from({ length: 60 }, (_, i) => (i % 2 ? a : b).decide({ limits: [shared] })),
    );
    assert.equal(verdicts.filter((v) => v.limits[0].allowed).length, 40);
    assert.ok(a.stats.roundTrips + b.stats.roundTrips >= 60);
  } finally {
    await a.close();
    await b.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("kvStore counts an entry read past its end as absent (KV's expireIn is lazy)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "xs2a-kv-" });
  const path = `${dir}/store.kv`;
  const store = await kvStore({ path, prefix: "p" });
  const kv = await Deno.openKv(path);
  try {
    // An entry as the store writes it, whose end has passed but which KV still holds.
    await kv.set(["p", "consent:c1"], { v: "1|4", e: Date.now() - 1 });
    assert.ok((await kv.get(["p", "consent:c1"])).value, "KV still holds it");
    assert.equal(await store.get("consent:c1"), undefined);
  } finally {
    kv.close();
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("createStore() opens kv in GATEWAY_DATA_DIR unless the policy names a path", async () => {
  const dir = await Deno.makeTempDir({ prefix: "xs2a-data-" });
  Deno.env.set("GATEWAY_DATA_DIR", dir);
  try {
    const store = await createStore(storeSection.parse({ kind: "kv" }));
    assert.equal(store.kind, "kv");
    await store.put("k", "v", 60_000);
    await store.close();
    assert.ok((await Deno.stat(`${dir}/xs2a-edge.kv`)).isFile);
  } finally {
    Deno.env.delete("GATEWAY_DATA_DIR");
    await Deno.remove(dir, { recursive: true });
  }
});
