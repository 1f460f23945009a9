import assert from "node:assert/strict";
import { MemoryStore } from "../../../src/store/memory.ts";
import { storeContract } from "../../support/store_contract.ts";
import { limit } from "../../support/store_contract.ts";

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
