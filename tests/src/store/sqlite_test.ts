import assert from "node:assert/strict";
import { createStore } from "../../../src/store/mod.ts";
import { SqliteStore } from "../../../src/store/sqlite.ts";
import { storeSection } from "../../../src/sections/sections.ts";
import {
  assertReplayAfterReopen,
  frequency,
  idem,
  limit,
  storeContract,
} from "../../support/store_contract.ts";
import { tempSqlite } from "../../support/temp_store.ts";
import { waitFor } from "../../support/wait.ts";

storeContract("SqliteStore", tempSqlite);

Deno.test("SqliteStore keeps a claim and a kept answer in its file across a reopen", async () => {
  const dir = await Deno.makeTempDir({ prefix: "xs2a-sqlite-" });
  const path = `${dir}/nested/store.sqlite`;
  try {
    await assertReplayAfterReopen(() => new SqliteStore({ path }), {
      status: 201,
      headers: [["x-a", "1"]],
      body: btoa("{}"),
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("SqliteStore counts a rate limit across two connections to one file (workers, processes)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "xs2a-sqlite-" });
  const a = new SqliteStore({ path: `${dir}/s.sqlite` });
  const b = new SqliteStore({ path: `${dir}/s.sqlite` });
  try {
    const one = limit({ limit: 2, burst: 2 });
    const allowed = [];
    for (const store of [a, b, a, b]) {
      allowed.push((await store.decide({ limits: [one] })).limits[0].allowed);
    }
    assert.deepEqual(allowed, [true, true, false, false]);
  } finally {
    await a.close();
    await b.close();
  }
});

Deno.test("SqliteStore deletes expired rows in its sweep, walking the whole table", async () => {
  const dir = await Deno.makeTempDir({ prefix: "xs2a-sqlite-" });
  const path = `${dir}/s.sqlite`;
  const store = new SqliteStore({ path });
  try {
    // More rows than one step of the sweep looks at, the live one last in key order.
    for (let i = 0; i < 1200; i++) await store.put(`k${String(i).padStart(4, "0")}`, "v", 1);
    await store.put("kept", "v", 60_000);
    const { DatabaseSync } = await import("node:sqlite");
    const count = () => {
      const db = new DatabaseSync(path);
      try {
        return (db.prepare("SELECT count(*) AS n FROM entries").get() as { n: number }).n;
      } finally {
        db.close();
      }
    };
    assert.equal(count(), 1201);
    assert.ok(await waitFor(() => count() === 1, 10_000), `${count()} rows left`);
    assert.equal(await store.get("kept"), "v");
  } finally {
    await store.close();
  }
});

Deno.test("createStore() opens sqlite in GATEWAY_DATA_DIR unless the policy names a path", async () => {
  const dir = await Deno.makeTempDir({ prefix: "xs2a-data-" });
  Deno.env.set("GATEWAY_DATA_DIR", dir);
  try {
    const store = await createStore(storeSection.parse({ kind: "sqlite" }));
    assert.equal(store.kind, "sqlite");
    assert.equal((store as SqliteStore).path, `${dir}/xs2a-edge.sqlite`);
    await store.close();
    const named = await createStore(storeSection.parse({ kind: "sqlite", path: `${dir}/x.db` }));
    assert.equal((named as SqliteStore).path, `${dir}/x.db`);
    await named.close();
    assert.ok((await Deno.stat(`${dir}/xs2a-edge.sqlite`)).isFile);
  } finally {
    Deno.env.delete("GATEWAY_DATA_DIR");
  }
});

Deno.test("SqliteStore: three processes on one file count one rate limit exactly", async () => {
  const dir = await Deno.makeTempDir({ prefix: "xs2a-sqlite-" });
  const script = `
    import { SqliteStore } from "${new URL("../../../src/store/sqlite.ts", import.meta.url)}";
    const store = new SqliteStore({ path: "${dir}/s.sqlite", timeoutMs: 5000 });
    const part = { name: "l", key: "rl:shared", limit: 1000, windowMs: 3600000, burst: 1000, enforce: true };
    let allowed = 0;
    for (let i = 0; i < 600; i++) {
      if ((await store.decide({ limits: [part] })).limits[0].allowed) allowed++;
    }
    await store.close();
    console.log(allowed);
  `;
  try {
    const runs = await Promise.all(
      [0, 1, 2].map(() =>
        new Deno.Command(Deno.execPath(), { args: ["eval", script], stderr: "inherit" }).output()
      ),
    );
    const allowed = runs.map((run) => {
      assert.ok(run.success);
      return Number(new TextDecoder().decode(run.stdout));
    });
    assert.equal(allowed.reduce((a, b) => a + b, 0), 1000, `allowed per process: ${allowed}`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("SqliteStore ends a value and an id's in-flight time to the millisecond", async () => {
  const dir = await Deno.makeTempDir({ prefix: "xs2a-sqlite-" });
  let now = Date.now();
  const store = new SqliteStore({ path: `${dir}/s.sqlite`, now: () => now });
  try {
    await store.put("consent:c1", "1|4", 100);
    const first = idem({ inflightMs: 100 });
    const again = () => store.decide({ idempotency: idem({ inflightMs: 100 }), limits: [] });
    const known = async () =>
      (await store.decide({ frequency: frequency(), limits: [] })).frequency?.known;
    assert.equal(
      (await store.decide({ idempotency: first, limits: [] })).idempotency?.outcome,
      "claimed",
    );
    now += 99;
    assert.equal(await store.get("consent:c1"), "1|4", "a millisecond before its end");
    assert.equal(await known(), true);
    assert.equal((await again()).idempotency?.outcome, "inflight");
    now += 1;
    assert.equal(await store.get("consent:c1"), undefined, "at its end");
    assert.equal(await known(), false);
    assert.equal((await again()).idempotency?.outcome, "unknown");
  } finally {
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});
