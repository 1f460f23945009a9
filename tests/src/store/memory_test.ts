import assert from "node:assert/strict";
import { MemoryStore } from "../../../src/store/memory.ts";
import { StoreUnavailableError } from "../../../src/store/types.ts";
import { storeContract } from "../../support/store_contract.ts";
import { idem, keepAnswer, limit } from "../../support/store_contract.ts";

storeContract("MemoryStore", () => Promise.resolve(new MemoryStore()));

// Measured in a child process with --expose-gc, so that garbage does not count as growth.
const MEASURE = `
import { MemoryStore } from "${new URL("../../../src/store/memory.ts", import.meta.url)}";
const store = new MemoryStore({ maxEntries: 10000 });
const part = { name: "l", limit: 3, windowMs: 60000, burst: 3, enforce: true };
const heap = () => { globalThis.gc(); globalThis.gc(); return Deno.memoryUsage().heapUsed; };
for (let i = 0; i < 100000; i++) store.decide({ limits: [{ ...part, key: "rl:" + i }] });
const settled = heap();
for (let i = 100000; i < 1000000; i++) store.decide({ limits: [{ ...part, key: "rl:" + i }] });
console.log(JSON.stringify({ size: store.size, settled, after: heap() }));
`;

Deno.test("MemoryStore keeps memory flat under a million distinct keys", async () => {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--v8-flags=--expose-gc", MEASURE],
    stderr: "inherit",
  }).output();
  assert.ok(output.success);
  const { size, settled, after } = JSON.parse(new TextDecoder().decode(output.stdout));
  assert.equal(size, 10_000);
  assert.ok(after - settled < 2 * 1024 * 1024, `heap grew from ${settled} to ${after} bytes`);
});

Deno.test("MemoryStore forgets expired entries", async () => {
  let now = 1_000_000;
  const store = new MemoryStore({ now: () => now });
  const one = limit({ limit: 1, burst: 1 });
  assert.equal((await store.decide({ limits: [one] })).limits[0].allowed, true);
  assert.equal((await store.decide({ limits: [one] })).limits[0].allowed, false);
  now += 60_001;
  assert.equal((await store.decide({ limits: [one] })).limits[0].allowed, true);
});

Deno.test("MemoryStore counts only live entries against maxEntries (an expiring rate-limit key does not evict a kept answer)", async () => {
  let now = 1_000_000;
  const store = new MemoryStore({ maxEntries: 10, now: () => now });
  await keepAnswer(store, idem({ retentionMs: 86_400_000 }), {
    status: 201,
    headers: [],
    body: "",
  });
  // One caller, one request a second, 100 a minute: its limit's key expires before the next
  // request and is set anew each time; two keys at most are ever alive.
  const perTpp = limit({ limit: 100, burst: 100 });
  for (let i = 0; i < 100; i++) {
    now += 1000;
    assert.equal((await store.decide({ limits: [perTpp] })).limits[0].allowed, true);
  }
  for (let i = 0; i < 100; i++) {
    await store.put(`consent:c${i}`, "1|4", 86_400_000);
    await store.delete(`consent:c${i}`);
  }
  const repeat = await store.decide({ idempotency: idem({ retentionMs: 86_400_000 }), limits: [] });
  assert.equal(repeat.idempotency?.outcome, "replay");
});

// A long-lived entry at the head of the queue, then a million keys that each expire or are
// deleted: the slots they leave behind must not pile up.
const CHURN = `
import { MemoryStore } from "${new URL("../../../src/store/memory.ts", import.meta.url)}";
let now = 1_000_000;
const store = new MemoryStore({ maxEntries: 100000, now: () => now });
const heap = () => { globalThis.gc(); globalThis.gc(); return Deno.memoryUsage().heapUsed; };
await store.put("kept", "1", 86_400_000);
const churn = (from, to) => {
  for (let i = from; i < to; i++) {
    now += 1;
    store.put("short:" + (i % 1000), "1", 1);
    store.put("gone:" + i, "1", 60000);
    store.delete("gone:" + i);
  }
};
churn(0, 100000);
const settled = heap();
churn(100000, 1000000);
console.log(JSON.stringify({ size: store.size, settled, after: heap() }));
`;

Deno.test("MemoryStore keeps memory flat when keys expire or are deleted behind a long-lived one", async () => {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--v8-flags=--expose-gc", CHURN],
    stderr: "inherit",
  }).output();
  assert.ok(output.success);
  const { size, settled, after } = JSON.parse(new TextDecoder().decode(output.stdout));
  assert.ok(size <= 1001, `${size} entries held`);
  assert.ok(after - settled < 2 * 1024 * 1024, `heap grew from ${settled} to ${after} bytes`);
});

// 50000 entries kept, then rate-limit keys that expire between their callers' requests: setting
// such a key again reuses its entry, so nothing piles up behind the kept ones.
const EXPIRING = `
import { MemoryStore } from "${new URL("../../../src/store/memory.ts", import.meta.url)}";
let now = 1_000_000;
const store = new MemoryStore({ maxEntries: 100000, now: () => now });
const heap = () => { globalThis.gc(); globalThis.gc(); return Deno.memoryUsage().heapUsed; };
const part = { name: "per_tpp", limit: 100000, windowMs: 60000, burst: 100000, enforce: true };
const day = { ...part, limit: 1, burst: 1, windowMs: 86_400_000 };
for (let i = 0; i < 50000; i++) await store.decide({ limits: [{ ...day, key: "rl:kept:" + i }] });
const churn = async (from, to) => {
  for (let i = from; i < to; i++) {
    now += 10;
    await store.decide({ limits: [{ ...part, key: "rl:per_tpp:ip%3A127.0.0." + (i % 100) }] });
  }
};
await churn(0, 1000);
const settled = heap();
await churn(1000, 41000);
console.log(JSON.stringify({ size: store.size, settled, after: heap() }));
`;

Deno.test("MemoryStore reuses the entry of a key set again after it expired", async () => {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--v8-flags=--expose-gc", EXPIRING],
    stderr: "inherit",
  }).output();
  assert.ok(output.success);
  const { size, settled, after } = JSON.parse(new TextDecoder().decode(output.stdout));
  assert.equal(size, 50_100);
  assert.ok(after - settled < 1024 * 1024, `heap grew from ${settled} to ${after} bytes`);
});

// Rate-limit counters of 1 KB (their key): the store at its cap, then 9000 more, each evicting
// the oldest.
const EVICTED = `
import { MemoryStore } from "${new URL("../../../src/store/memory.ts", import.meta.url)}";
const store = new MemoryStore({ maxEntries: 10000 });
const heap = () => { globalThis.gc(); globalThis.gc(); return Deno.memoryUsage().heapUsed; };
const part = { name: "big", limit: 1, burst: 1, windowMs: 86_400_000, enforce: true };
const limit = (i) => ({ limits: [{ ...part, key: "rl:" + String(i).padEnd(1024, "x") }] });
for (let i = 0; i < 10000; i++) await store.decide(limit(i));
const settled = heap();
for (let i = 10000; i < 19000; i++) await store.decide(limit(i));
console.log(JSON.stringify({ size: store.size, settled, after: heap() }));
`;

Deno.test("MemoryStore holds nothing of an evicted entry", async () => {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--v8-flags=--expose-gc", EVICTED],
    stderr: "inherit",
  }).output();
  assert.ok(output.success);
  const { size, settled, after } = JSON.parse(new TextDecoder().decode(output.stdout));
  assert.equal(size, 10_000);
  assert.ok(after - settled < 1024 * 1024, `heap grew from ${settled} to ${after} bytes`);
});

Deno.test("MemoryStore never evicts an X-Request-ID inside its retention: a write that needs room then fails as a store outage", async () => {
  let now = 1_000_000;
  const store = new MemoryStore({ maxEntries: 3, now: () => now });
  for (const key of ["idem:a", "idem:b", "idem:c"]) {
    const claimed = await store.decide({ idempotency: idem({ key }), limits: [] });
    assert.equal(claimed.idempotency?.outcome, "claimed");
  }
  await assert.rejects(
    store.decide({ idempotency: idem({ key: "idem:d" }), limits: [limit()] }),
    StoreUnavailableError,
  );
  await assert.rejects(store.put("consent:c1", "1|4", 60_000), StoreUnavailableError);
  assert.equal(store.stats.errors, 2);
  for (const key of ["idem:a", "idem:b", "idem:c"]) {
    const again = await store.decide({ idempotency: idem({ key }), limits: [] });
    assert.equal(again.idempotency?.outcome, "inflight", key);
  }
  // Past their retention they make room again.
  now += 60_001;
  const later = await store.decide({ idempotency: idem({ key: "idem:d" }), limits: [] });
  assert.equal(later.idempotency?.outcome, "claimed");
});

Deno.test("MemoryStore evicts the oldest rate-limit counters, never a consent or an X-Request-ID, to make room", async () => {
  const store = new MemoryStore({ maxEntries: 3 });
  await store.decide({ idempotency: idem({ key: "idem:kept" }), limits: [limit({ key: "rl:1" })] });
  await store.put("consent:c1", "1|4", 60_000);
  for (let i = 2; i < 10; i++) {
    assert.equal((await store.decide({ limits: [limit({ key: `rl:${i}` })] })).blocked, false);
  }
  assert.equal(store.size, 3);
  const kept = await store.decide({ idempotency: idem({ key: "idem:kept" }), limits: [] });
  assert.equal(kept.idempotency?.outcome, "inflight");
  assert.equal(await store.get("consent:c1"), "1|4", "the learnt consent is a decision, kept");
});

Deno.test("MemoryStore keeps its estimated bytes within maxBytes, whatever the answers' size", async () => {
  const store = new MemoryStore({ maxBytes: 200_000 });
  const body = "A".repeat(60_000);
  let kept = 0;
  for (let i = 0; i < 10; i++) {
    const part = idem({ key: `idem:${i}` });
    assert.equal((await store.decide({ idempotency: part, limits: [] })).blocked, false);
    try {
      await store.complete({
        key: part.key,
        token: part.token,
        action: "done",
        response: { status: 201, headers: [], body },
        retentionMs: 60_000,
      });
      kept++;
    } catch (error) {
      assert.ok(error instanceof StoreUnavailableError);
    }
    assert.ok(store.bytes <= 200_000, `${store.bytes} bytes`);
  }
  assert.equal(kept, 3, "three answers of 60 KB fit in 200 KB");
});

Deno.test("MemoryStore never evicts a used id of unique mode or a completed answer to make room", async () => {
  const store = new MemoryStore({ maxEntries: 3 });
  const unique = idem({ key: "idem:unique", mode: "unique" });
  const replay = idem({ key: "idem:replay" });
  assert.equal((await store.decide({ idempotency: unique, limits: [] })).blocked, false);
  assert.equal((await store.decide({ idempotency: replay, limits: [] })).blocked, false);
  await store.complete({
    key: replay.key,
    token: replay.token,
    action: "done",
    response: { status: 201, headers: [], body: "" },
    retentionMs: 60_000,
  });
  for (let i = 0; i < 10; i++) {
    assert.equal((await store.decide({ limits: [limit({ key: `rl:${i}` })] })).blocked, false);
  }
  const again = await store.decide({ idempotency: idem({ ...unique }), limits: [] });
  assert.equal(again.idempotency?.outcome, "duplicate");
  const replayed = await store.decide({ idempotency: idem({ key: replay.key }), limits: [] });
  assert.equal(replayed.idempotency?.outcome, "replay");
});

Deno.test("MemoryStore counts one round trip per completion", async () => {
  const store = new MemoryStore();
  const part = idem();
  await store.decide({ idempotency: part, limits: [] });
  const before = store.stats.roundTrips;
  await store.complete({ key: part.key, token: part.token, action: "release", retentionMs: 1 });
  assert.equal(store.stats.roundTrips, before + 1);
});

Deno.test("MemoryStore answers duplicate to any reuse in unique mode, whatever the fingerprint, and in replay mode to an id used in unique mode", async () => {
  const store = new MemoryStore();
  await store.decide({ idempotency: idem({ mode: "unique" }), limits: [] });
  const other = await store.decide({
    idempotency: idem({ mode: "unique", fingerprint: "fp-2" }),
    limits: [],
  });
  assert.equal(other.idempotency?.outcome, "duplicate");
  const replay = await store.decide({ idempotency: idem(), limits: [] });
  assert.equal(replay.idempotency?.outcome, "duplicate");
});

Deno.test("MemoryStore frees a used id of unique mode after its retention, whatever the in-flight time", async () => {
  let now = 1_000_000;
  const store = new MemoryStore({ now: () => now });
  const part = { mode: "unique", inflightMs: 60_000, retentionMs: 1_000 } as const;
  assert.equal(
    (await store.decide({ idempotency: idem(part), limits: [] })).idempotency?.outcome,
    "claimed",
  );
  now += 1_000;
  assert.equal(
    (await store.decide({ idempotency: idem(part), limits: [] })).idempotency?.outcome,
    "claimed",
  );
});

Deno.test("MemoryStore takes a marker for unknown from the end of its in-flight time on", async () => {
  let now = 1_000_000;
  const store = new MemoryStore({ now: () => now });
  await store.decide({ idempotency: idem({ inflightMs: 5_000 }), limits: [] });
  now += 4_999;
  const before = await store.decide({ idempotency: idem({ inflightMs: 5_000 }), limits: [] });
  assert.equal(before.idempotency?.outcome, "inflight");
  now += 1;
  const at = await store.decide({ idempotency: idem({ inflightMs: 5_000 }), limits: [] });
  assert.equal(at.idempotency?.outcome, "unknown");
});

Deno.test("MemoryStore keeps a completed answer that needed room pinned: later writes never evict it", async () => {
  const store = new MemoryStore({ maxBytes: 20_000 });
  for (let i = 0; i < 100; i++) await store.decide({ limits: [limit({ key: `rl:a${i}` })] });
  // The answer grows the record past maxBytes: it is written again, after evicting counters.
  const part = idem();
  await keepAnswer(store, part, { status: 201, headers: [], body: "A".repeat(8_000) });
  for (let i = 0; i < 300; i++) await store.decide({ limits: [limit({ key: `rl:b${i}` })] });
  const again = await store.decide({ idempotency: idem({ key: part.key }), limits: [] });
  assert.equal(again.idempotency?.outcome, "replay");
});

/** Claims `key` in unique mode for `retentionMs`; the outcome. */
async function claimUnique(store: MemoryStore, key: string, retentionMs: number) {
  const part = idem({ key, mode: "unique", fingerprint: "", token: "", retentionMs });
  return (await store.decide({ idempotency: part, limits: [] })).idempotency?.outcome;
}

Deno.test("MemoryStore forgets ids used in unique mode after their retention, the oldest as new ones arrive", async () => {
  let now = 1_000_000;
  const store = new MemoryStore({ now: () => now });
  for (let i = 0; i < 1000; i++) {
    assert.equal(await claimUnique(store, `old:${i}`, 1_000), "claimed");
  }
  assert.equal(store.size, 1000);
  now += 2_000;
  for (let i = 0; i < 10; i++) assert.equal(await claimUnique(store, `new:${i}`, 1_000), "claimed");
  // Each new id forgets two expired ones.
  assert.equal(store.size, 1000 - 20 + 10);
  assert.equal(await claimUnique(store, "new:0", 1_000), "duplicate");
  assert.equal(await claimUnique(store, "old:999", 1_000), "claimed");
});

Deno.test("MemoryStore keeps sweeping ids used in unique mode after it held none, and after an id came back", async () => {
  let now = 1_000_000;
  const store = new MemoryStore({ now: () => now });
  await claimUnique(store, "a", 100);
  now += 200;
  // "a" is forgotten, and nothing is left to sweep.
  await claimUnique(store, "b", 100);
  assert.equal(store.size, 1);
  now += 200;
  await claimUnique(store, "c", 1_000);
  assert.equal(store.size, 1, "an id added after the store held none is swept too");
  now += 2_000;
  // With one retention, an id that comes back goes behind the others: the order they expire in.
  for (const key of ["p", "q", "r"]) await claimUnique(store, key, 100);
  now += 50;
  await claimUnique(store, "s", 100);
  now += 70;
  // "p", "q" and "r" expired ("c" too, swept now); "r" comes back.
  assert.equal(await claimUnique(store, "r", 100), "claimed");
  now += 40;
  // "s" expired, "r" not: the next new id sweeps "s".
  await claimUnique(store, "t", 100);
  assert.equal(store.size, 2, "r and t");
});

Deno.test("MemoryStore counts ids used in unique mode against max_entries and max_bytes", async () => {
  const store = new MemoryStore({ maxEntries: 3 });
  for (const key of ["a", "b", "c"]) assert.equal(await claimUnique(store, key, 60_000), "claimed");
  await assert.rejects(claimUnique(store, "d", 60_000), StoreUnavailableError);
  const small = new MemoryStore({ maxBytes: 200 });
  assert.equal(await claimUnique(small, "a".repeat(60), 60_000), "claimed");
  assert.ok(small.bytes > 60 && small.bytes <= 200);
  await assert.rejects(claimUnique(small, "b".repeat(80), 60_000), StoreUnavailableError);
  // An id claimed again after its retention takes its own place, even in a full store whose
  // oldest id is still retained (nothing to sweep, nothing to evict).
  let now = 1_000_000;
  const full = new MemoryStore({ maxEntries: 2, now: () => now });
  assert.equal(await claimUnique(full, "long", 60_000), "claimed");
  assert.equal(await claimUnique(full, "short", 100), "claimed");
  now += 200;
  assert.equal(await claimUnique(full, "short", 100), "claimed");
  assert.equal(full.size, 2);
});

Deno.test("MemoryStore holds one record for a key whose record of the other mode ended", async () => {
  let now = 1_000_000;
  const store = new MemoryStore({ now: () => now });
  const replay = (key: string) =>
    store.decide({ idempotency: idem({ key, inflightMs: 100, retentionMs: 100 }), limits: [] });
  // Two expired records ahead of the key's own, so that sweeping the oldest does not reach it.
  for (const key of ["idem:tpp:1", "idem:tpp:2", "idem:tpp:x"]) {
    assert.equal((await replay(key)).idempotency?.outcome, "claimed");
  }
  now += 200;
  assert.equal(await claimUnique(store, "idem:tpp:x", 100), "claimed");
  assert.equal(store.size, 1);
  for (const key of ["idem:tpp:3", "idem:tpp:4"]) await claimUnique(store, key, 1);
  now += 200;
  assert.equal((await replay("idem:tpp:x")).idempotency?.outcome, "claimed");
  assert.equal(store.size, 1);
  assert.equal(await claimUnique(store, "idem:tpp:x", 100), "duplicate");
});

Deno.test("MemoryStore forgets ids used in unique mode at the end of their retention, behind a longer one too when full", async () => {
  let now = 1_000_000;
  const store = new MemoryStore({ maxEntries: 3, now: () => now });
  const empty = store.bytes;
  assert.equal(await claimUnique(store, "z", 60_000), "claimed");
  const one = store.bytes;
  for (const key of ["a", "b"]) assert.equal(await claimUnique(store, key, 100), "claimed");
  assert.ok(store.bytes > one);
  // Full, and the expired ids are behind "z": only the full sweep reaches them, at the very
  // millisecond their retention ends.
  now += 100;
  assert.equal(await claimUnique(store, "c", 100), "claimed");
  assert.equal(store.size, 2);
  assert.equal(store.bytes, 2 * one - empty, "the forgotten ids' bytes are given back");
  await store.close();
  assert.equal(store.size, 0);
  assert.equal(store.bytes, 0);
});

Deno.test("MemoryStore sweeps an id used in unique mode at the very end of its retention", async () => {
  let now = 1_000_000;
  const store = new MemoryStore({ now: () => now });
  await claimUnique(store, "a", 100);
  now += 100;
  await claimUnique(store, "b", 100);
  assert.equal(store.size, 1);
});

Deno.test("MemoryStore's estimate (what max_bytes counts) is 128 bytes per entry plus its key and value", async () => {
  const store = new MemoryStore();
  // A text value: its characters.
  await store.put("consent:1", "1|4", 60_000);
  assert.equal(store.bytes, 128 + 9 + 3);
  // A counter: 8 bytes.
  await store.decide({ limits: [limit({ key: "rl:1" })] });
  assert.equal(store.bytes, 128 + 9 + 3 + (128 + 4 + 8));
  const before = store.bytes;
  // An id in flight: 64 bytes of record, its fingerprint and its token.
  const part = idem({ key: "idem:t:1", fingerprint: "f".repeat(44), token: "t".repeat(36) });
  await store.decide({ idempotency: part, limits: [] });
  assert.equal(store.bytes - before, 128 + 8 + 64 + 44 + 36);
  // Its answer kept: the packed answer's characters on top.
  const response = {
    status: 201,
    headers: [["location", "/v1/x"]] as [string, string][],
    body: "QQ==",
  };
  await store.complete({
    key: part.key,
    token: part.token,
    action: "done",
    response,
    retentionMs: 60_000,
  });
  const packed = JSON.stringify([201, [["location", "/v1/x"]], "QQ=="]).length;
  assert.equal(store.bytes - before, 128 + 8 + 64 + 44 + 36 + packed);
  const replay = await store.decide({
    idempotency: idem({ key: part.key, fingerprint: part.fingerprint }),
    limits: [],
  });
  assert.deepEqual(replay.idempotency?.response, response);
});

Deno.test("MemoryStore refuses an owner past its share, not the others, and gives the share back as its ids expire", async () => {
  let now = 1_000_000;
  const store = new MemoryStore({ maxEntries: 20, ownerShare: 0.25, now: () => now });
  const claim = (key: string, owner: string, mode: "replay" | "unique" = "unique") =>
    store.decide({ idempotency: idem({ key, mode }), limits: [], owner });
  for (let i = 0; i < 5; i++) {
    assert.equal((await claim(`idem::${i}`, "ip:192.0.2.0")).blocked, false);
  }
  await assert.rejects(claim("idem::5", "ip:192.0.2.0"), /holds its share of 5 entries/);
  await assert.rejects(
    store.put("consent:c", "1|4", 60_000, "ip:192.0.2.0"),
    StoreUnavailableError,
  );
  assert.deepEqual(store.held("ip:192.0.2.0"), {
    entries: 5,
    bytes: store.held("ip:192.0.2.0").bytes,
  });
  assert.equal(
    (await claim("idem:B:1", "PSDGE-NBG-000002", "replay")).idempotency?.outcome,
    "claimed",
  );
  await store.put("consent:c", "1|4", 60_000, "PSDGE-NBG-000002");
  assert.equal(store.held("PSDGE-NBG-000002").entries, 2);
  assert.equal(store.condition().warnings.length, 0, "one caller's share is no full store");
  now += 60_001;
  assert.equal((await claim("idem::5", "ip:192.0.2.0")).idempotency?.outcome, "claimed");
  assert.equal(store.held("ip:192.0.2.0").entries, 1, "its expired ids went, with their share");
});
