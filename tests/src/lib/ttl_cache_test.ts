import assert from "node:assert/strict";
import { TtlCache } from "../../../src/lib/ttl_cache.ts";

Deno.test("TtlCache keeps an entry for its TTL and drops the oldest past maxEntries", () => {
  const cache = new TtlCache<string>({ ttlMs: 100, maxEntries: 2 });
  cache.set("a", "A", 0);
  assert.deepEqual(cache.get("a", 99), { value: "A", expires: 100 });
  assert.equal(cache.get("a", 100), undefined);
  assert.equal(cache.size, 0);
  cache.set("a", "A", 0);
  cache.set("b", "B", 0);
  cache.set("c", "C", 0);
  assert.equal(cache.get("a", 1), undefined);
  assert.equal(cache.get("b", 1)?.value, "B");
  assert.equal(cache.get("c", 1)?.value, "C");
  assert.equal(cache.size, 2);
});
