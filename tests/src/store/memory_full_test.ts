/**
 * A full memory store is heard: every refused write is counted, the first of each minute is
 * logged with its cause, and `condition()` reports it until a minute passes without a refusal.
 */
import assert from "node:assert/strict";
import { MemoryStore } from "../../../src/store/memory.ts";
import { StoreUnavailableError } from "../../../src/store/types.ts";
import { memoryLogger } from "../../../src/lib/log.ts";
import { idem, keepAnswer, limit } from "../../support/store_contract.ts";

const DAY = 86_400_000;

/** The claim of a new X-Request-ID, kept for a day. */
function fresh() {
  return idem({ key: `idem:tpp:${crypto.randomUUID()}`, retentionMs: DAY, inflightMs: DAY });
}

Deno.test("MemoryStore logs a full store once a minute with its cause, counts every refused write and reports it in condition()", async () => {
  let now = 1_000_000;
  const log = memoryLogger();
  const store = new MemoryStore({ maxEntries: 3, now: () => now, log });
  assert.deepEqual(store.condition().warnings, []);
  for (let i = 0; i < 3; i++) {
    const verdict = await store.decide({ idempotency: fresh(), limits: [] });
    assert.equal(verdict.idempotency?.outcome, "claimed");
  }
  const refuse = () =>
    assert.rejects(
      store.decide({ idempotency: fresh(), limits: [] }),
      StoreUnavailableError,
    );
  await refuse();
  await refuse();
  // A rate limit alone finds no room either (nothing evictable is left): refused and counted.
  await assert.rejects(store.decide({ limits: [limit()] }), StoreUnavailableError);
  const full = () => log.lines.filter((line) => line.msg === "store full, writes refused");
  assert.equal(full().length, 1, "one line for the first refusal of the minute");
  assert.equal(full()[0].level, "error");
  assert.equal(full()[0].store, "memory");
  assert.match(String(full()[0].cause), /max_entries 3 reached: 3 X-Request-IDs/);
  assert.equal(full()[0].refused, 1);
  assert.equal(full()[0].max_entries, 3);
  assert.equal(store.condition().capacity?.refused, 3);
  assert.equal(store.condition().capacity?.entries, 3);
  assert.match(store.condition().warnings[0], /^The memory store is full \(max_entries 3/);

  now += 60_000;
  await refuse();
  assert.equal(full().length, 2, "the next minute's first refusal is logged");
  assert.equal(full()[1].refused, 3, "with the refusals since the previous line");
  assert.equal(full()[1].refused_total, 4);
  now += 60_000;
  assert.deepEqual(store.condition().warnings, [], "a minute without a refusal: no longer full");
});

Deno.test("MemoryStore names max_bytes as the cause when the bytes run out", async () => {
  const log = memoryLogger();
  const store = new MemoryStore({ maxBytes: 2000, log });
  const answer = { status: 201, headers: [], body: "x".repeat(1200) };
  await keepAnswer(store, fresh(), answer);
  const second = fresh();
  await store.decide({ idempotency: second, limits: [] });
  await assert.rejects(
    store.complete({
      key: second.key,
      token: second.token,
      action: "done",
      response: answer,
      retentionMs: DAY,
    }),
    /max_bytes 2000 reached/,
  );
  assert.match(String(log.lines[0].cause), /^max_bytes 2000 reached/);
});

Deno.test("MemoryStore made without a log still says it is full: one JSON line on stderr", async () => {
  const script = `
import { MemoryStore } from "${new URL("../../../src/store/memory.ts", import.meta.url)}";
const store = new MemoryStore({ maxEntries: 1 });
const claim = (key) => ({
  idempotency: { key, mode: "replay", fingerprint: "f", token: "t", enforce: true,
    inflightMs: 60000, retentionMs: 60000 },
  limits: [],
});
await store.decide(claim("a"));
for (const key of ["b", "c"]) await store.decide(claim(key)).catch(() => {});
`;
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--ext=ts", script],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const lines = new TextDecoder().decode(output.stderr).trim().split("\n").filter((l) => l);
  assert.equal(lines.length, 1, lines.join("\n"));
  const line = JSON.parse(lines[0]);
  assert.equal(line.level, "error");
  assert.equal(line.msg, "store full, writes refused");
  assert.match(line.cause, /^max_entries 1 reached/);
});

Deno.test("MemoryStore holds X-Request-IDs up to exactly max_bytes and refuses the one past it", async () => {
  // An id in flight is 128 + key + 64 + fingerprint + token bytes: 280 here.
  const claim = (n: number) =>
    idem({ key: `idem:t:${n}`, fingerprint: "f".repeat(44), token: "t".repeat(36) });
  const store = new MemoryStore({ maxBytes: 560, maxEntries: 3, log: memoryLogger() });
  for (const n of [1, 2]) {
    const verdict = await store.decide({ idempotency: claim(n), limits: [] });
    assert.equal(verdict.idempotency?.outcome, "claimed", `claim ${n}`);
  }
  assert.equal(store.bytes, 560, "exactly at max_bytes");
  // Three entries are within max_entries 3: the bytes, not the entries, are named.
  await assert.rejects(
    store.decide({ idempotency: claim(3), limits: [] }),
    /The memory store is full \(max_bytes 560 reached: 560 bytes/,
  );
});
