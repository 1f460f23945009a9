import assert from "node:assert/strict";
import { scriptedStore, type ScriptTransport } from "../../../src/store/script.ts";
import { StoreUnavailableError } from "../../../src/store/types.ts";
import { memoryLogger } from "../../../src/lib/log.ts";

/**
 * A transport whose every call fails with `error`: what a client library throws when its
 * server answers with an error (the store contract against real servers is in redis_test.ts
 * and upstash_test.ts).
 */
function failing(error: unknown): ScriptTransport {
  const fail = () => Promise.reject(error);
  return {
    evalSha: fail,
    eval: fail,
    get: fail,
    del: fail,
    close: () => Promise.resolve(),
  };
}

Deno.test("scriptedStore() cuts a long error text to 200 characters, in the log line and the error", async () => {
  const log = memoryLogger();
  const text = `ERR ${"x".repeat(296)}`;
  const store = scriptedStore(failing(new Error(text)), {
    kind: "redis",
    prefix: "t:",
    timeoutMs: 1000,
    log,
  });
  await assert.rejects(store.refund("c"), (error) => {
    assert.ok(error instanceof StoreUnavailableError);
    assert.equal(error.message, `The store failed on refund: ${text.slice(0, 200)}`);
    return true;
  });
  assert.deepEqual(log.lines.at(-1), {
    level: "error",
    msg: "store unavailable",
    store: "redis",
    operation: "refund",
    error: text.slice(0, 200),
  });
  assert.equal(store.stats.errors, 1);
});
