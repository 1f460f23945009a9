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

/** An adaptive AIMD pool on a clock of the test's. */
function aimdPool(clock: { now: number }) {
  return new ConcurrencyLimiter({
    maxInFlight: 1,
    maxQueue: 10,
    queueTimeoutMs: 60_000,
    adaptive: {
      algorithm: "aimd",
      min: 1,
      max: 5,
      initial: 2,
      windowMs: 10,
      tolerance: 1.5,
      backoff: 0.5,
      timeoutMs: 1000,
    },
  }, { now: () => clock.now });
}

/**
 * One sampling window: 11 measurements (what closes a window), taken by holding as many slots at
 * once as the limit allows, 5 ms of the clock each time.
 */
function window(pool: ConcurrencyLimiter, clock: { now: number }, outcome: "ok" | "dropped") {
  clock.now += 100;
  for (let left = 11; left > 0;) {
    const slots = Array.from({ length: Math.min(pool.limit, left) }, () => pool.acquire());
    assert.ok(slots.every((slot) => typeof slot === "function"));
    clock.now += 5;
    for (const slot of slots) (slot as Release)(outcome);
    left -= slots.length;
  }
}

Deno.test("ConcurrencyLimiter with adaptive raises its limit as the core answers, up to max", () => {
  const clock = { now: 0 };
  const pool = aimdPool(clock);
  assert.equal(pool.limit, 2);
  window(pool, clock, "ok");
  assert.equal(pool.limit, 3);
  for (let i = 0; i < 5; i++) window(pool, clock, "ok");
  assert.equal(pool.limit, 5);
  // Released without an outcome (never reached the core): nothing measured, nothing moves
  clock.now += 100;
  for (let i = 0; i < 30; i++) (pool.acquire() as Release)();
  assert.equal(pool.limit, 5);
});

Deno.test("ConcurrencyLimiter with adaptive hands the slots of a raised limit to waiters at once", async () => {
  const clock = { now: 0 };
  const pool = aimdPool(clock);
  for (let i = 0; i < 10; i++) { // 10 of the window's 11
    const slot = pool.acquire() as Release;
    clock.now += 5;
    slot("ok");
  }
  const held = [pool.acquire() as Release, pool.acquire() as Release];
  const waiting = [pool.acquire(), pool.acquire()];
  assert.ok(waiting.every((w) => w instanceof Promise));
  clock.now += 100;
  held[0]("ok"); // the eleventh: the limit rises to 3, so both waiters get a slot
  assert.equal(pool.limit, 3);
  assert.equal(pool.queued, 0);
  assert.equal(pool.inFlight, 3);
  assert.ok((await Promise.all(waiting)).every((slot) => typeof slot === "function"));
});

Deno.test("ConcurrencyLimiter with adaptive aimd backs off at a drop, once for the requests sent before it", () => {
  const clock = { now: 0 };
  const pool = aimdPool(clock);
  for (let i = 0; i < 4; i++) window(pool, clock, "ok");
  assert.equal(pool.limit, 5);
  const sent = Array.from({ length: 5 }, () => pool.acquire() as Release);
  clock.now += 5;
  sent[0]("dropped");
  assert.equal(pool.limit, 2); // at once: floor(5 * 0.5)
  for (const slot of sent.slice(1)) slot("dropped");
  assert.equal(pool.limit, 2); // sent under the old limit: no second back-off
  const later = pool.acquire() as Release;
  clock.now += 5;
  later("dropped");
  assert.equal(pool.limit, 1); // never below min
});

Deno.test("ConcurrencyLimiter with adaptive lets no waiter in while in flight is above a lowered limit", async () => {
  const clock = { now: 0 };
  const pool = aimdPool(clock);
  for (let i = 0; i < 4; i++) window(pool, clock, "ok");
  assert.equal(pool.limit, 5);
  const held = Array.from({ length: 5 }, () => pool.acquire() as Release);
  const waiting = pool.acquire();
  assert.ok(waiting instanceof Promise);
  clock.now += 50;
  held[0]("dropped"); // the limit halves to 2, with 4 still in flight
  assert.equal(pool.limit, 2);
  assert.equal(pool.queued, 1);
  held[1]();
  held[2]();
  assert.equal(pool.queued, 1); // 2 in flight: none free under a limit of 2
  held[3]();
  assert.equal(pool.queued, 0);
  assert.equal(typeof await waiting, "function");
  assert.equal(pool.inFlight, 2);
});

Deno.test("LimiterPools reports per pool name the newest pool's limit and every pool's counts", () => {
  const pools = new LimiterPools();
  const limits = { maxInFlight: 2, maxQueue: 0, queueTimeoutMs: 10 };
  const old = pools.pool("core", limits);
  const slot = old.acquire() as Release;
  pools.pool("core", { ...limits, maxInFlight: 7 });
  pools.pool("core:writes", { ...limits, maxInFlight: 1 });
  assert.deepEqual(Object.fromEntries(pools.gauges()), {
    core: { limit: 7, inFlight: 1, queued: 0 },
    "core:writes": { limit: 1, inFlight: 0, queued: 0 },
  });
  slot();
  assert.notEqual(
    pools.pool("core", { ...limits, adaptive: undefined }),
    pools.pool("core", {
      ...limits,
      adaptive: {
        algorithm: "gradient",
        min: 1,
        max: 4,
        initial: 1,
        windowMs: 1000,
        tolerance: 1.5,
        backoff: 0.9,
        timeoutMs: 5000,
      },
    }),
  );
});

Deno.test("ConcurrencyLimiter with callerShare holds one caller to its share of slots and queue, and hands a freed slot to a caller below its share", async () => {
  const pool = new ConcurrencyLimiter({
    maxInFlight: 4,
    maxQueue: 4,
    queueTimeoutMs: 60_000,
    callerShare: 0.5,
  });
  assert.equal(pool.callerSlots, 2);
  assert.equal(pool.callerQueue, 2);
  const a1 = pool.acquire("A") as Release;
  const a2 = pool.acquire("A") as Release;
  const a3 = pool.acquire("A");
  const a4 = pool.acquire("A");
  assert.ok(a3 instanceof Promise && a4 instanceof Promise, "A waits past its slots");
  assert.equal(pool.acquire("A"), "full", "and is shed past its places in the queue");
  const b1 = pool.acquire("B");
  assert.equal(typeof b1, "function", "B takes a free slot at once, ahead of A's waiters");
  const b2 = pool.acquire("B") as Release;
  const b3 = pool.acquire("B");
  assert.ok(b3 instanceof Promise);
  assert.equal(pool.inFlight, 4);
  b2();
  // The freed slot is B's: A is at its share, B is below it.
  assert.equal(typeof await b3, "function");
  assert.deepEqual(pool.held("A"), { inFlight: 2, queued: 2 });
  a1();
  assert.equal(typeof await a3, "function");
  for (const release of [a2, b1 as Release, await b3 as Release, await a3 as Release]) release();
  assert.equal(typeof await a4, "function");
  (await a4 as Release)();
  assert.equal(pool.inFlight, 0);
  assert.deepEqual(pool.held("A"), { inFlight: 0, queued: 0 });
});
