import assert from "node:assert/strict";
import { ConcurrencyLimiter, LimiterPools, type Release } from "../../../src/upstream/limiter.ts";

Deno.test("ConcurrencyLimiter hands freed slots to waiters in order and sheds past the queue", async () => {
  const pool = new ConcurrencyLimiter({ maxInFlight: 1, maxQueue: 1, queueTimeoutMs: 1000 });
  const first = pool.acquire() as Release;
  assert.equal(typeof first, "function");
  const second = pool.acquire();
  assert.ok(second instanceof Promise);
  assert.equal(pool.acquire(), "full");
  assert.equal(pool.queued, 1);
  first();
  first(); // a second release frees nothing more
  const granted = await second;
  assert.equal(typeof granted, "function");
  assert.equal(pool.inFlight, 1);
  (granted as Release)();
  assert.equal(pool.inFlight, 0);
  assert.equal(pool.peak, 1);
  assert.deepEqual(pool.shed, { full: 1, timeout: 0 });
});

Deno.test("ConcurrencyLimiter sheds a waiter whose queue_timeout ran out", async () => {
  const pool = new ConcurrencyLimiter({ maxInFlight: 1, maxQueue: 5, queueTimeoutMs: 50 });
  const held = pool.acquire() as Release;
  const started = performance.now();
  assert.equal(await pool.acquire(), "timeout");
  assert.ok(performance.now() - started >= 45);
  assert.equal(pool.queued, 0);
  held();
  assert.equal(pool.inFlight, 0);
});

Deno.test("LimiterPools shares a pool by name and limits", () => {
  const pools = new LimiterPools();
  const limits = { maxInFlight: 2, maxQueue: 0, queueTimeoutMs: 10 };
  assert.equal(pools.pool("core", limits), pools.pool("core", { ...limits }));
  assert.notEqual(pools.pool("core", limits), pools.pool("core:writes", limits));
  assert.notEqual(pools.pool("core", limits), pools.pool("core", { ...limits, maxInFlight: 3 }));
});
