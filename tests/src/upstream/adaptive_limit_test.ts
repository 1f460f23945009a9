import assert from "node:assert/strict";
import {
  Aimd,
  ExpAverage,
  Gradient2,
  type LimitAlgorithm,
  SampledLimit,
} from "../../../src/upstream/adaptive_limit.ts";

/** Feeds `times` measurements of `rtt` ms with the core used to the full limit; returns the limits. */
function feed(algorithm: LimitAlgorithm, rtt: number, times: number): number[] {
  return Array.from({ length: times }, () => algorithm.update(rtt, algorithm.limit, false));
}

Deno.test("ExpAverage averages its warm-up samples plainly, then decays by 2 / (window + 1)", () => {
  const average = new ExpAverage(3, 2);
  assert.equal(average.add(10), 10);
  assert.equal(average.add(20), 15);
  assert.equal(average.add(35), 15 * 0.5 + 35 * 0.5);
  average.scale(0.5);
  assert.equal(average.value, 12.5);
});

Deno.test("Gradient2 grows by smoothing * queueSize per measurement while latency holds", () => {
  const gradient = new Gradient2({ min: 2, max: 50, initial: 10 });
  // gradient 1: estimate = 0.8 * 10 + 0.2 * (10 + 4) = 10.8, then 11.6, 12.4, 13.2
  assert.deepEqual(feed(gradient, 20, 4), [10, 11, 12, 13]);
  assert.equal(gradient.baseline, 20);
});

Deno.test("Gradient2 shrinks by the ratio of baseline to latency, at most half per step", () => {
  const gradient = new Gradient2({ min: 2, max: 50, initial: 10, tolerance: 1 });
  feed(gradient, 20, 10); // the baseline's warm-up: 20 ms; estimate 18
  assert.equal(gradient.limit, 18);
  // baseline = 20 * (1 - 2/601) + 40 * 2/601; gradient = baseline / 40, about 0.5017
  const baseline = 20 * (1 - 2 / 601) + 40 * (2 / 601);
  const expected = 18 * 0.8 + (18 * (baseline / 40) + 4) * 0.2;
  assert.equal(gradient.update(40, 18, false), Math.floor(expected));
  // Far slower answers shrink by half a step at most: the gradient is held at 0.5
  const before = gradient.limit;
  const at = gradient.update(10_000, before, false);
  assert.ok(at >= Math.floor(before * 0.9), `${before} -> ${at}`);
  assert.ok(at < before);
});

Deno.test("Gradient2 tolerates latency up to tolerance times the baseline without shrinking", () => {
  const gradient = new Gradient2({ min: 2, max: 50, initial: 10, tolerance: 1.5 });
  feed(gradient, 20, 10);
  const before = gradient.limit;
  feed(gradient, 29, 5); // 1.45 x the baseline
  assert.ok(gradient.limit > before);
});

Deno.test("Gradient2 does not grow while the core is used to less than half the limit", () => {
  const gradient = new Gradient2({ min: 2, max: 50, initial: 20 });
  for (let i = 0; i < 20; i++) assert.equal(gradient.update(20, 9, false), 20);
});

Deno.test("Gradient2 never leaves [min, max]", () => {
  const gradient = new Gradient2({ min: 3, max: 12, initial: 5, queueSize: 1, tolerance: 1 });
  const grown = feed(gradient, 10, 200);
  assert.equal(Math.max(...grown), 12);
  assert.equal(gradient.limit, 12);
  // Latency climbing without end (a core falling over): the limit sinks to min and stays there
  for (let rtt = 20; rtt < 20_000; rtt *= 1.2) gradient.update(rtt, gradient.limit, false);
  assert.equal(gradient.limit, 3);
  assert.ok(feed(gradient, 1e6, 50).every((limit) => limit === 3));
  assert.equal(new Gradient2({ min: 3, max: 12, initial: 100 }).limit, 12);
  assert.equal(new Gradient2({ min: 3, max: 12 }).limit, 3);
});

Deno.test("Gradient2 lowers a baseline left high by a long overload faster than its average", () => {
  const gradient = new Gradient2({ min: 2, max: 50, initial: 10, longWindow: 600 });
  feed(gradient, 100, 10);
  gradient.update(10, 10, false);
  const decayed = (100 * (1 - 2 / 601) + 10 * (2 / 601)) * 0.95;
  assert.ok(Math.abs(gradient.baseline - decayed) < 1e-9);
});

Deno.test("Gradient2 refuses a tolerance below 1 and bounds out of order", () => {
  assert.throws(() => new Gradient2({ min: 2, max: 10, tolerance: 0.9 }), RangeError);
  assert.throws(() => new Gradient2({ min: 10, max: 2 }), RangeError);
  assert.throws(() => new Gradient2({ min: 0, max: 2 }), RangeError);
  assert.equal(new Gradient2({ min: 1, max: 1 }).limit, 1, "equal bounds, from 1: a fixed limit");
});

Deno.test("Aimd adds one per measurement while used to half the limit and nothing drops", () => {
  const aimd = new Aimd({ min: 2, max: 50, initial: 10 });
  assert.deepEqual(feed(aimd, 20, 3), [11, 12, 13]);
  assert.equal(aimd.update(20, 6, false), 13); // 6 * 2 < 13: app-limited, no growth
  assert.equal(aimd.update(20, 7, false), 14);
});

Deno.test("Aimd multiplies by backoff after a drop or a latency above timeout", () => {
  const aimd = new Aimd({ min: 2, max: 50, initial: 20, backoff: 0.9, timeoutMs: 1000 });
  assert.equal(aimd.update(20, 20, true), 18);
  assert.equal(aimd.update(1001, 18, false), 16); // floor(18 * 0.9) = 16
  assert.equal(aimd.update(1000, 16, false), 17); // at the timeout: not a drop
  assert.equal(aimd.update(5, 1, true), 15); // a drop backs off even when app-limited
});

Deno.test("Aimd never leaves [min, max]", () => {
  const aimd = new Aimd({ min: 4, max: 9, initial: 6, backoff: 0.5 });
  assert.equal(Math.max(...feed(aimd, 10, 20)), 9);
  for (let i = 0; i < 10; i++) aimd.update(10, 9, true);
  assert.equal(aimd.limit, 4);
  assert.equal(new Aimd({ min: 4, max: 9, initial: 1 }).limit, 4);
  assert.throws(() => new Aimd({ min: 1, max: 9, backoff: 1 }), RangeError);
  assert.throws(() => new Aimd({ min: 1, max: 9, backoff: 0.4 }), RangeError);
});

/** An algorithm that records what it was fed. */
function recorder(): LimitAlgorithm & { fed: [number, number, boolean][] } {
  const fed: [number, number, boolean][] = [];
  return {
    fed,
    limit: 7,
    update(rtt, inFlight, dropped) {
      fed.push([rtt, inFlight, dropped]);
      return 7;
    },
  };
}

Deno.test("SampledLimit feeds the window's average latency, highest in-flight count and drops", () => {
  const algorithm = recorder();
  const sampled = new SampledLimit(algorithm, { windowMs: 1000 });
  // 10 samples are not enough (more than 10 are needed)
  for (let i = 0; i < 10; i++) {
    sampled.sample({ start: i, rtt: 10 + i, inFlight: i, dropped: false });
  }
  assert.equal(algorithm.fed.length, 0);
  sampled.sample({ start: 11, rtt: 30, inFlight: 3, dropped: true });
  // 11 samples, one dropped: its latency stays out of the average
  assert.deepEqual(algorithm.fed, [[14.5, 9, true]]);
  assert.equal(sampled.windows, 1);
  // The next window closes only `windowMs` after the last one ended (at 41)
  for (let i = 0; i < 30; i++) sampled.sample({ start: 100, rtt: 20, inFlight: 2, dropped: false });
  assert.equal(algorithm.fed.length, 1);
  sampled.sample({ start: 1041, rtt: 20, inFlight: 2, dropped: false });
  assert.deepEqual(algorithm.fed[1], [20, 2, false]);
});

Deno.test("SampledLimit closes a window of drops alone, so AIMD backs off from a core that only times out", () => {
  const aimd = new Aimd({ min: 1, max: 20, initial: 10 });
  const sampled = new SampledLimit(aimd, { windowMs: 100 });
  let start = 0;
  for (let window = 0; window < 3; window++) {
    for (let i = 0; i < 11; i++) sampled.sample({ start, rtt: 5000, inFlight: 10, dropped: true });
    start += 5200;
  }
  assert.equal(sampled.windows, 3);
  assert.equal(aimd.limit, 7); // 10 -> 9 -> 8 -> 7
});

Deno.test("SampledLimit with dropsEndWindow feeds a drop at once and ignores drops sent before it", () => {
  const aimd = new Aimd({ min: 1, max: 20, initial: 10, backoff: 0.5 });
  const sampled = new SampledLimit(aimd, { windowMs: 1000, dropsEndWindow: true });
  sampled.sample({ start: 0, rtt: 20, inFlight: 10, dropped: false });
  sampled.sample({ start: 0, rtt: 30, inFlight: 10, dropped: true });
  assert.equal(aimd.limit, 5);
  assert.equal(sampled.windows, 1);
  sampled.sample({ start: 10, rtt: 30, inFlight: 10, dropped: true }); // sent before 30
  assert.equal(aimd.limit, 5);
  sampled.sample({ start: 30, rtt: 30, inFlight: 5, dropped: true });
  assert.equal(aimd.limit, 2);
  // Answers close a window as usual: 11 of them and the window's time
  for (let i = 0; i < 11; i++) {
    sampled.sample({ start: 1100, rtt: 20, inFlight: 2, dropped: false });
  }
  assert.equal(aimd.limit, 3);
});

Deno.test("SampledLimit ignores answers faster than 0.1 ms (never reached the core)", () => {
  const algorithm = recorder();
  const sampled = new SampledLimit(algorithm, { windowMs: 10 });
  for (let i = 0; i < 50; i++) sampled.sample({ start: i, rtt: 0.05, inFlight: 1, dropped: false });
  assert.equal(algorithm.fed.length, 0);
});

Deno.test("SampledLimit with Gradient2 raises the limit at a steady latency and lowers it when latency climbs", () => {
  const sampled = new SampledLimit(new Gradient2({ min: 2, max: 40, initial: 10 }), {
    windowMs: 100,
  });
  let now = 0;
  /** One window of 11 requests at the current limit, answered in `rtt` ms. */
  const window = (rtt: number) => {
    for (let i = 0; i < 11; i++) {
      sampled.sample({ start: now, rtt, inFlight: sampled.limit, dropped: false });
    }
    now += rtt + 101;
  };
  for (let i = 0; i < 40; i++) window(20);
  const grown = sampled.limit;
  assert.equal(grown, 40);
  // The core slows with its load: 20 ms + 4 ms per request in flight
  for (let i = 0; i < 60; i++) window(20 + 4 * sampled.limit);
  assert.ok(sampled.limit < grown / 2, `limit ${sampled.limit}`);
  assert.ok(sampled.limit >= 2);
});
