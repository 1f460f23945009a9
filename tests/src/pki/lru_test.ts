import assert from "node:assert/strict";
import { BoundedCache } from "../../../src/pki/lru.ts";

Deno.test("BoundedCache holds exactly its cap and drops the least recently used past it", () => {
  const cache = new BoundedCache<string, number>(3);
  for (const [i, key] of ["a", "b", "c"].entries()) cache.set(key, i);
  assert.equal(cache.size, 3, "exactly at the cap: nothing dropped");
  assert.equal(cache.get("a"), 0, "a is now the most recently used");
  cache.set("d", 3);
  assert.equal(cache.size, 3);
  assert.equal(cache.get("b"), undefined, "b, the least recently used, went");
  assert.deepEqual([cache.get("a"), cache.get("c"), cache.get("d")], [0, 2, 3]);
});
