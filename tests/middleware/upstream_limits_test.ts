import assert from "node:assert/strict";
// In-process through the app's fetch (the upstream is still real HTTP); see tests/support/gateway.ts.
import { gatewayApp as startGateway } from "../support/gateway.ts";
import { passthroughPolicy } from "../support/policies.ts";
import { startUpstream } from "../support/upstream.ts";
import { upstreamLimits } from "../../middleware/upstream_limits.ts";

/** A slow upstream on 127.0.0.1 that counts the requests it holds at once. */
function slowUpstream(ms: number) {
  const counts = { now: 0, max: 0, reads: 0, writes: 0, maxReads: 0 };
  const upstream = startUpstream(async (request) => {
    const write = request.method !== "GET";
    counts.now++;
    counts.max = Math.max(counts.max, counts.now);
    if (write) counts.writes++;
    else counts.maxReads = Math.max(counts.maxReads, ++counts.reads);
    await new Promise((resolve) => setTimeout(resolve, ms));
    counts.now--;
    if (!write) counts.reads--;
    return Response.json({ ok: true });
  });
  return { upstream, counts };
}

function read(gateway: { fetch(path: string): Promise<Response> }) {
  return gateway.fetch("/v1/products/deposits");
}

/** Each response's status and the ms it took, with its body consumed. */
async function timed(call: () => Promise<Response>) {
  const started = performance.now();
  const response = await call();
  await response.body?.cancel();
  return { response, ms: performance.now() - started };
}

Deno.test("upstreamLimits() never lets more than max_in_flight reach the core; the queue waits its turn", async () => {
  const { upstream, counts } = slowUpstream(100);
  await using _ = upstream;
  await using gateway = await startGateway({
    upstream: upstream.url,
    policy: passthroughPolicy({
      defaults: {
        upstream_limits: {
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
  const { upstream, counts } = slowUpstream(1500);
  await using _ = upstream;
  await using gateway = await startGateway({
    upstream: upstream.url,
    policy: passthroughPolicy({
      defaults: {
        upstream_limits: {
          mode: "enforce",
          max_in_flight: 2,
          max_queue: 2,
          queue_timeout: "300ms",
        },
      },
    }),
  });
  const results = await Promise.all(Array.from({ length: 8 }, () => timed(() => read(gateway))));
  const ok = results.filter((r) => r.response.status === 200);
  const shed = results.filter((r) => r.response.status === 503);
  assert.equal(ok.length, 2);
  assert.equal(shed.length, 6);
  for (const { response, ms } of shed) {
    assert.equal(response.headers.get("retry-after"), "1");
    // Shed within queue_timeout (300 ms) and some slack, long before the core would answer.
    assert.ok(ms < 1000, `shed after ${ms} ms`);
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
  const { upstream, counts } = slowUpstream(600);
  await using _ = upstream;
  await using gateway = await startGateway({
    upstream: upstream.url,
    policy: passthroughPolicy({
      defaults: {
        upstream_limits: {
          mode: "enforce",
          max_in_flight: 2,
          max_queue: 0,
          writes: { max_in_flight: 1 },
        },
      },
    }),
  });
  const reads = Array.from({ length: 6 }, () => timed(() => read(gateway)));
  await new Promise((resolve) => setTimeout(resolve, 100));
  const write = await timed(() =>
    gateway.fetch("/v1/payments/sepa-credit-transfers", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    })
  );
  const statuses = (await Promise.all(reads)).map((r) => r.response.status).sort();
  assert.deepEqual(statuses, [200, 200, 503, 503, 503, 503]);
  assert.equal(write.response.status, 200);
  assert.equal(counts.writes, 1);
  assert.equal(counts.maxReads, 2);
});

Deno.test("upstreamLimits() applies to no operation without max_in_flight", () => {
  const options = upstreamLimits.options.parse({});
  assert.equal(options.max_in_flight, undefined);
  assert.equal(options.queue_timeout, 1000);
  assert.equal(options.pool, "core");
});
