import assert from "node:assert/strict";
import { setDefaultStoreKind, storeSection } from "../../../src/sections/sections.ts";

Deno.test("storeSection: a policy that names no store gets this process's default (memory unless main.ts set sqlite)", () => {
  assert.equal(storeSection.parse({}).kind, "memory");
  assert.equal(storeSection.parse({ kind: "" }).kind, "memory", "${STORE_KIND:-} unset");
  setDefaultStoreKind("sqlite");
  try {
    assert.equal(storeSection.parse({}).kind, "sqlite");
    assert.equal(storeSection.parse(undefined).kind, "sqlite", "no store section at all");
    assert.equal(storeSection.parse({ kind: "" }).kind, "sqlite");
    assert.equal(storeSection.parse({ kind: "memory" }).kind, "memory", "a named kind stays");
  } finally {
    setDefaultStoreKind("memory");
  }
});

Deno.test("storeSection: sqlite and kv need no url; a path only where there is a file", () => {
  assert.equal(storeSection.parse({ kind: "sqlite", path: "/var/lib/x/db" }).path, "/var/lib/x/db");
  assert.equal(storeSection.parse({ kind: "kv" }).url, "");
  assert.equal(storeSection.parse({ kind: "sqlite" }).synchronous, "normal");
  assert.equal(storeSection.parse({ kind: "sqlite", synchronous: "full" }).synchronous, "full");
  assert.throws(() => storeSection.parse({ kind: "sqlite", synchronous: "off" }));
  assert.throws(
    () => storeSection.parse({ kind: "redis", url: "redis://r:6379", path: "x.db" }),
    /a redis store has no path/,
  );
  assert.throws(
    () => storeSection.parse({ kind: "kv", url: "redis://r:6379" }),
    /KV Connect URL/,
  );
  assert.equal(
    storeSection.parse({ kind: "kv", url: "https://api.deno.com/databases/x/connect" }).url,
    "https://api.deno.com/databases/x/connect",
  );
  assert.throws(() => storeSection.parse({ kind: "redis" }), /a redis store needs a url/);
});
