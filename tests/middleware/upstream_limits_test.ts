import assert from "node:assert/strict";
// In-process through the app's fetch (the upstream is still real HTTP); see tests/support/gateway.ts.
import { gatewayApp as startGateway } from "../support/gateway.ts";
import { passthroughPolicy } from "../support/policies.ts";
import { startUpstream } from "../support/upstream.ts";
import { waitFor } from "../support/wait.ts";
import { upstreamLimits } from "../../middleware/upstream_limits.ts";
import { LimiterPools } from "../../src/upstream/limiter.ts";

/**
 * A slow upstream on 127.0.0.1 that counts the requests it holds at once: it answers each after
 * `wait` (milliseconds, or until the promise settles).
 */
function slowUpstream(wait: number | Promise<void>) {
  const counts = { now: 0, max: 0, reads: 0, writes: 0, maxReads: 0 };
  const upstream = startUpstream(async (request) => {
    const write = request.method !== "GET";
    counts.now++;
    counts.max = Math.max(counts.max, counts.now);
    if (write) counts.writes++;
    else counts.maxReads = Math.max(counts.maxReads, ++counts.reads);
    await (typeof wait === "number" ? new Promise((resolve) => setTimeout(resolve, wait)) : wait);
    counts.now--;
    if (!write) counts.reads--;
    return Response.json({ ok: true });
  });
  return { upstream, counts };
}

function read(gateway: { fetch(path: string): Promise<Response> }) {
  return gateway.fetch("/v1/products/deposits");
}

/** Each response, with its body consumed. */
async function timed(call: () => Promise<Response>) {
  const response = await call();
  await response.body?.cancel();
  return { response };
}

/**
 * A core that holds every request until `release()`, or for 10 s at the most so that a gateway
 * that waits for it cannot hang the test; `released` tells an answer that came before from one
 * that had to wait for the core.
 */
function heldCore() {
  const held = Promise.withResolvers<void>();
  const core = { ...slowUpstream(held.promise), released: false, release };
  const timer = setTimeout(release, 10_000);
  function release() {
    clearTimeout(timer);
    core.released = true;
    held.resolve();
  }
  return core;
}

/** `count` reads at once; the core is released once `shed` of them were shed. */
function readsShedding(
  gateway: { fetch(path: string): Promise<Response> },
  core: ReturnType<typeof heldCore>,
  options: { count: number; shed: number },
) {
  let shed = 0;
  return Promise.all(Array.from({ length: options.count }, async () => {
    const { response } = await timed(() => read(gateway));
    const early = !core.released;
    if (response.status === 503 && ++shed === options.shed) core.release();
    return { response, early };
  }));
}

Deno.test("upstreamLimits() never lets more than max_in_flight reach the core; the queue waits its turn", async () => {
  const { upstream, counts } = slowUpstream(100);
  await using _ = upstream;
  await using gateway = await startGateway({
    upstream: upstream.url,
    policy: passthroughPolicy({
      defaults: {
        upstream_limits: {
          caller_share: 1, // one caller here (shares: tests/security/upstream_fair_shares_test.ts)
          mode: "enforce",
          max_in_flight: 3,
          max_queue: 20,
          queue_timeout: "5s",
        },
      },
    }),
  });
  const results = await Promise.all(Array.from({ length: 12 }, () => timed(() => read(gateway))));
  assert.deepEqual(results.map((r) => r.response.status), Array(12).fill(200));
  assert.equal(upstream.received.length, 12);
  assert.equal(counts.max, 3);
});

Deno.test("upstreamLimits() sheds with 503 and Retry-After when the queue is full or the wait runs out", async () => {
  const core = heldCore();
  const { upstream, counts } = core;
  await using _ = upstream;
  await using gateway = await startGateway({
    upstream: upstream.url,
    policy: passthroughPolicy({
      defaults: {
        upstream_limits: {
          caller_share: 1, // one caller here (shares: tests/security/upstream_fair_shares_test.ts)
          mode: "enforce",
          max_in_flight: 2,
          max_queue: 2,
          queue_timeout: "300ms",
        },
      },
    }),
  });
  const results = await readsShedding(gateway, core, { count: 8, shed: 6 });
  const ok = results.filter((r) => r.response.status === 200);
  const shed = results.filter((r) => r.response.status === 503);
  assert.equal(ok.length, 2);
  assert.equal(shed.length, 6);
  for (const { response, early } of shed) {
    assert.equal(response.headers.get("retry-after"), "1");
    assert.ok(early, "shed while the core still held the others, not after it answered");
  }
  assert.equal(counts.max, 2);
  assert.equal(upstream.received.length, 2);
  const lines = gateway.log.lines.filter((line) => line.status === 503);
  assert.equal(lines.length, 6);
  assert.ok(
    lines.every((line) => JSON.stringify(line.findings).includes('"check":"upstream_limits"')),
  );
});

Deno.test("upstreamLimits() keeps a pool for writes that a storm of reads cannot take", async () => {
  const core = heldCore();
  const { upstream, counts } = core;
  await using _ = upstream;
  await using gateway = await startGateway({
    upstream: upstream.url,
    policy: passthroughPolicy({
      defaults: {
        upstream_limits: {
          caller_share: 1, // one caller here (shares: tests/security/upstream_fair_shares_test.ts)
          mode: "enforce",
          max_in_flight: 2,
          max_queue: 0,
          writes: { max_in_flight: 1 },
        },
      },
    }),
  });
  const reads = Array.from({ length: 6 }, () => timed(() => read(gateway)));
  // The storm holds both read slots at the core when the write comes.
  assert.ok(await waitFor(() => counts.reads === 2), "two reads at the core");
  const write = timed(() =>
    gateway.fetch("/v1/payments/sepa-credit-transfers", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    })
  );
  assert.ok(await waitFor(() => counts.writes === 1), "the write reached the core beside them");
  core.release();
  const statuses = (await Promise.all(reads)).map((r) => r.response.status).sort();
  assert.deepEqual(statuses, [200, 200, 503, 503, 503, 503]);
  assert.equal((await write).response.status, 200);
  assert.equal(counts.writes, 1);
  assert.equal(counts.maxReads, 2);
});

Deno.test("upstreamLimits() applies to no operation without max_in_flight", () => {
  const options = upstreamLimits.options.parse({});
  assert.equal(options.max_in_flight, undefined);
  assert.equal(options.queue_timeout, 1000);
  assert.equal(options.pool, "core");
});

const TOKEN = "metrics-token-for-tests";

/**
 * An upstream on 127.0.0.1 that slows down with its load: each request takes `base` ms plus `perRequest` ms
 * for every request it holds at once (itself included). Counts what it holds, overall and since
 * `counts.mark()`.
 */
function loadedUpstream(base: number, perRequest: number) {
  const counts = {
    now: 0,
    max: 0,
    /** The most held at once since the last mark. */
    maxSinceMark: 0,
    mark() {
      this.maxSinceMark = this.now;
    },
  };
  const upstream = startUpstream(async () => {
    const held = ++counts.now;
    counts.max = Math.max(counts.max, held);
    counts.maxSinceMark = Math.max(counts.maxSinceMark, held);
    await new Promise((resolve) => setTimeout(resolve, base + perRequest * held));
    counts.now--;
    return Response.json({ ok: true });
  });
  return { upstream, counts };
}

/** `n` clients sending reads one after the other for `ms`; the statuses they got. */
async function drive(gateway: { fetch(path: string): Promise<Response> }, n: number, ms: number) {
  const until = performance.now() + ms;
  const statuses: number[] = [];
  await Promise.all(Array.from({ length: n }, async () => {
    while (performance.now() < until) {
      const response = await read(gateway);
      await response.body?.cancel();
      statuses.push(response.status);
    }
  }));
  return statuses;
}

function limitsPolicy(limits: Record<string, unknown>) {
  return passthroughPolicy({
    // One caller here (shares: tests/security/upstream_fair_shares_test.ts).
    defaults: { upstream_limits: { mode: "enforce", caller_share: 1, ...limits } },
    metrics: { token: TOKEN },
  });
}

/** The load of both tests below: 2 clients long enough to learn the core's latency, then 40. */
async function growingLoad(
  gateway: { fetch(path: string): Promise<Response> },
  counts: { mark(): void; maxSinceMark: number },
  limits: LimiterPools,
) {
  await drive(gateway, 2, 2500);
  const light = limits.gauges().get("core")!.limit;
  const heavy = drive(gateway, 40, 4000);
  await new Promise((resolve) => setTimeout(resolve, 2500));
  counts.mark(); // the last 1.5 s of the heavy load
  const statuses = await heavy;
  return { statuses, settled: counts.maxSinceMark, light };
}

Deno.test("upstreamLimits() with adaptive gradient holds fewer requests at a core that slows with its load", async () => {
  const { upstream, counts } = loadedUpstream(10, 10);
  await using _ = upstream;
  const limits = new LimiterPools();
  await using gateway = await startGateway({
    upstream: upstream.url,
    policy: limitsPolicy({
      max_in_flight: 40,
      max_queue: 100,
      queue_timeout: "20s",
      adaptive: { algorithm: "gradient", min_in_flight: 2, max_in_flight: 40, window: "100ms" },
    }),
    services: { limits },
  });
  const { statuses, settled, light } = await growingLoad(gateway, counts, limits);
  assert.ok(statuses.every((status) => status === 200));
  assert.equal(light, 40); // 2 clients use too little of the limit to move it
  const { limit } = limits.gauges().get("core")!;
  // Latency at the core about 30 ms at 2 requests; tolerance 1.5 settles the limit near 8
  // (about 90 ms), far from the 40 requests offered and the 40 it started at.
  assert.ok(limit >= 2 && limit <= 16, `limit ${limit}`);
  assert.ok(settled <= 16, `${settled} at the core at once`);
  const metrics = await (await gateway.fetch("/metrics", {
    headers: { authorization: `Bearer ${TOKEN}` },
  })).text();
  assert.match(metrics, new RegExp(`xs2a_upstream_limit\\{pool="core"\\} ${limit}\\n`));
  assert.match(metrics, /xs2a_upstream_in_flight\{pool="core"\} 0\n/);
});

Deno.test("upstreamLimits() with a fixed limit lets the core take every slot however slow it gets", async () => {
  const { upstream, counts } = loadedUpstream(10, 10);
  await using _ = upstream;
  const limits = new LimiterPools();
  await using gateway = await startGateway({
    upstream: upstream.url,
    policy: limitsPolicy({ max_in_flight: 40, max_queue: 100, queue_timeout: "20s" }),
    services: { limits },
  });
  const { statuses, settled } = await growingLoad(gateway, counts, limits);
  assert.ok(statuses.every((status) => status === 200));
  assert.equal(limits.gauges().get("core")!.limit, 40);
  assert.equal(settled, 40);
});

/** An upstream on 127.0.0.1 that serves `capacity` requests at once in 20 ms and answers 503 past it. */
function cappedUpstream(capacity: number) {
  const counts = { now: 0, refused: 0, served: 0 };
  const upstream = startUpstream(async () => {
    if (counts.now >= capacity) {
      counts.refused++;
      return Response.json({ busy: true }, { status: 503 });
    }
    counts.now++;
    await new Promise((resolve) => setTimeout(resolve, 20));
    counts.now--;
    counts.served++;
    return Response.json({ ok: true });
  });
  return { upstream, counts };
}

Deno.test("upstreamLimits() with adaptive aimd backs off when the core refuses, so fewer requests are refused", async () => {
  const { upstream, counts } = cappedUpstream(6);
  await using _ = upstream;
  const limits = new LimiterPools();
  await using gateway = await startGateway({
    upstream: upstream.url,
    policy: limitsPolicy({
      max_in_flight: 30,
      max_queue: 100,
      queue_timeout: "20s",
      adaptive: {
        algorithm: "aimd",
        min_in_flight: 1,
        max_in_flight: 30,
        window: "100ms",
        backoff: 0.5,
      },
    }),
    services: { limits },
  });
  await drive(gateway, 30, 1500);
  const before = { refused: counts.refused, served: counts.served };
  const statuses = await drive(gateway, 30, 1500);
  const refused = counts.refused - before.refused;
  const served = counts.served - before.served;
  // Starting at 30 against a core of 6, the limit halves at each window with a refusal and grows
  // by one per window without: it hovers around the core's capacity.
  const { limit } = limits.gauges().get("core")!;
  assert.ok(limit <= 12, `limit ${limit}`);
  assert.ok(refused < served / 4, `${refused} refused, ${served} served`);
  assert.equal(statuses.filter((status) => status === 503).length, refused);
});

Deno.test("upstreamLimits() with adaptive aimd backs off once at the proxy's first timeout", async () => {
  const { upstream, counts } = slowUpstream(1000);
  await using _ = upstream;
  const limits = new LimiterPools();
  await using gateway = await startGateway({
    upstream: upstream.url,
    policy: passthroughPolicy({
      defaults: {
        proxy: { timeout: "100ms" },
        upstream_limits: {
          caller_share: 1, // one caller here (shares: tests/security/upstream_fair_shares_test.ts)
          mode: "enforce",
          max_in_flight: 8,
          max_queue: 0,
          adaptive: { algorithm: "aimd", min_in_flight: 1, max_in_flight: 8, backoff: 0.5 },
        },
      },
    }),
    services: { limits },
  });
  /** The Berlin Group code of each of `n` reads sent together. */
  const codes = async (n: number) =>
    (await Promise.all(Array.from({ length: n }, async () => {
      const response = await read(gateway);
      assert.equal(response.status, 503);
      return (await response.json()).tppMessages[0].code as string;
    }))).sort();
  assert.deepEqual(await codes(8), Array(8).fill("UPSTREAM_TIMEOUT"));
  // Eight timeouts of requests sent together: one back-off, 8 -> 4
  assert.equal(limits.gauges().get("core")!.limit, 4);
  assert.deepEqual(await codes(8), [
    ...Array(4).fill("UPSTREAM_TIMEOUT"),
    ...Array(4).fill("UPSTREAM_UNAVAILABLE"),
  ]);
  assert.equal(limits.gauges().get("core")!.limit, 2);
  // The core still works on requests the proxy gave up on: 8 + 4 at once (why AIMD backs off)
  assert.equal(counts.max, 12);
  assert.equal(upstream.received.length, 12);
});

Deno.test("upstreamLimits() with adaptive sheds queued requests with 503 within queue_timeout", async () => {
  const core = heldCore();
  const { upstream, counts } = core;
  await using _ = upstream;
  await using gateway = await startGateway({
    upstream: upstream.url,
    policy: limitsPolicy({
      max_queue: 3,
      queue_timeout: "300ms",
      adaptive: { min_in_flight: 2, max_in_flight: 10 },
    }),
  });
  const results = await readsShedding(gateway, core, { count: 8, shed: 6 });
  const shed = results.filter((r) => r.response.status === 503);
  assert.equal(results.filter((r) => r.response.status === 200).length, 2);
  assert.equal(shed.length, 6);
  for (const { response, early } of shed) {
    assert.equal(response.headers.get("retry-after"), "1");
    assert.ok(early, "shed while the core still held the others, not after it answered");
  }
  assert.equal(counts.max, 2); // the limit starts at min_in_flight
  const metrics = await (await gateway.fetch("/metrics", {
    headers: { authorization: `Bearer ${TOKEN}` },
  })).text();
  assert.match(metrics, /xs2a_upstream_shed_total\{pool="core",reason="full"\} 3\n/);
  assert.match(metrics, /xs2a_upstream_shed_total\{pool="core",reason="timeout"\} 3\n/);
});

Deno.test("upstreamLimits() keeps the writes pool at its fixed limit beside an adaptive pool", async () => {
  const { upstream, counts } = slowUpstream(300);
  await using _ = upstream;
  const limits = new LimiterPools();
  await using gateway = await startGateway({
    upstream: upstream.url,
    policy: limitsPolicy({
      max_in_flight: 3,
      adaptive: { algorithm: "aimd", min_in_flight: 3, max_in_flight: 8 },
      writes: { max_in_flight: 1 },
    }),
    services: { limits },
  });
  const writes = Array.from(
    { length: 3 },
    () =>
      timed(() =>
        gateway.fetch("/v1/payments/sepa-credit-transfers", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: "{}",
        })
      ),
  );
  const statuses = (await Promise.all(writes)).map((r) => r.response.status).sort();
  assert.deepEqual(statuses, [200, 503, 503]);
  assert.equal(counts.writes, 1);
  assert.deepEqual(Object.fromEntries(limits.gauges()), {
    core: { limit: 3, inFlight: 0, queued: 0 },
    "core:writes": { limit: 1, inFlight: 0, queued: 0 },
  });
  assert.equal(await (await read(gateway)).text(), '{"ok":true}');
  assert.equal(limits.gauges().get("core")!.limit, 3);
});

Deno.test("upstreamLimits() refuses adaptive bounds out of order and defaults to gradient from 1", () => {
  const options = upstreamLimits.options.parse({ adaptive: { max_in_flight: 5 } });
  assert.deepEqual(options.adaptive, {
    algorithm: "gradient",
    min_in_flight: 1,
    max_in_flight: 5,
    window: 1000,
    tolerance: 1.5,
    backoff: 0.9,
    timeout: 5000,
  });
  assert.deepEqual(upstreamLimits.validate!(options, {} as never), []);
  const reversed = upstreamLimits.options.parse({
    adaptive: { min_in_flight: 6, max_in_flight: 5 },
  });
  assert.deepEqual(upstreamLimits.validate!(reversed, {} as never), [
    "adaptive.min_in_flight: must be at most adaptive.max_in_flight (5), got 6",
  ]);
  const fixed = upstreamLimits.options.parse({ adaptive: { min_in_flight: 5, max_in_flight: 5 } });
  assert.deepEqual(upstreamLimits.validate!(fixed, {} as never), [], "equal bounds are in order");
  assert.equal(
    upstreamLimits.options.safeParse({ adaptive: { max_in_flight: 5, window: "50ms" } }).success,
    false,
  );
  assert.equal(
    upstreamLimits.options.safeParse({ adaptive: { max_in_flight: 5, backoff: 1 } }).success,
    false,
  );
  assert.equal(
    upstreamLimits.options.safeParse({ adaptive: { max_in_flight: 5, algorithm: "vegas" } })
      .success,
    false,
  );
});
