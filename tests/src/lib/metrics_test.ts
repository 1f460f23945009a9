import assert from "node:assert/strict";
import {
  Counter,
  Histogram,
  LabeledGauge,
  mergeSnapshots,
  renderSnapshot,
} from "../../../src/lib/metrics.ts";

Deno.test("Histogram renders cumulative buckets, +Inf, sum and count per label set", () => {
  const histogram = new Histogram("t_seconds", "test", [0.01, 0.1, 1]);
  const series = histogram.series({ op: "a" });
  for (const seconds of [0.005, 0.01, 0.05, 0.5, 3]) series.observe(seconds);
  histogram.observe({ op: "b" }, 0.2);
  const lines = histogram.render().split("\n");
  for (
    const expected of [
      't_seconds_bucket{op="a",le="0.01"} 2',
      't_seconds_bucket{op="a",le="0.1"} 3',
      't_seconds_bucket{op="a",le="1"} 4',
      't_seconds_bucket{op="a",le="+Inf"} 5',
      't_seconds_sum{op="a"} 3.565',
      't_seconds_count{op="a"} 5',
      't_seconds_bucket{op="b",le="0.1"} 0',
      't_seconds_bucket{op="b",le="1"} 1',
    ]
  ) assert.ok(lines.includes(expected), `${expected} in\n${lines.join("\n")}`);
  assert.equal(histogram.count({ op: "a" }), 5);
});

Deno.test("Counter cells and labelled increments count the same series", () => {
  const counter = new Counter("t_total", "test");
  const cell = counter.cell({ op: "a", status: "200" });
  cell.value++;
  counter.inc({ op: "a", status: "200" }, 2);
  assert.equal(counter.value({ op: "a", status: "200" }), 3);
  assert.match(counter.render(), /^t_total\{op="a",status="200"\} 3$/m);
});

Deno.test("mergeSnapshots() adds up counters, histograms and gauges of several workers", async () => {
  const { createMetrics, mergeSnapshots, renderSnapshot } = await import(
    "../../../src/lib/metrics.ts"
  );
  const one = createMetrics();
  const two = createMetrics();
  one.requests.inc({ op: "a", status: "200" }, 3);
  two.requests.inc({ op: "a", status: "200" }, 4);
  two.requests.inc({ op: "b", status: "404" });
  one.requestSeconds.observe({ op: "a" }, 0.002);
  two.requestSeconds.observe({ op: "a" }, 0.2);
  one.storeEntries.track(() => 5);
  two.storeEntries.track(() => 6);
  const text = renderSnapshot(mergeSnapshots([one.snapshot(), two.snapshot()]));
  assert.match(text, /^xs2a_requests_total\{op="a",status="200"\} 7$/m);
  assert.match(text, /^xs2a_requests_total\{op="b",status="404"\} 1$/m);
  assert.match(text, /^xs2a_request_duration_seconds_bucket\{op="a",le="0.0025"\} 1$/m);
  assert.match(text, /^xs2a_request_duration_seconds_bucket\{op="a",le="0.25"\} 2$/m);
  assert.match(text, /^xs2a_request_duration_seconds_count\{op="a"\} 2$/m);
  assert.match(text, /^xs2a_store_entries 11$/m);
  // One worker's snapshot renders as it always did.
  assert.equal(renderSnapshot(mergeSnapshots([one.snapshot()])), one.render());
});

Deno.test("LabeledGauge renders one line per label set, nothing without series, and sums over workers", () => {
  const gauge = new LabeledGauge("xs2a_upstream_limit", "Limit by pool");
  assert.equal(gauge.render(), "");
  gauge.track(() => [[{ pool: "core" }, 7], [{ pool: "core:writes" }, 2]]);
  assert.equal(
    gauge.render(),
    '# HELP xs2a_upstream_limit Limit by pool\n# TYPE xs2a_upstream_limit gauge\nxs2a_upstream_limit{pool="core"} 7\nxs2a_upstream_limit{pool="core:writes"} 2',
  );
  const other = new LabeledGauge("xs2a_upstream_limit", "Limit by pool");
  other.track(() => [[{ pool: "core" }, 5]]);
  assert.equal(
    renderSnapshot(mergeSnapshots([[gauge.snapshot()], [other.snapshot()]])),
    '# HELP xs2a_upstream_limit Limit by pool\n# TYPE xs2a_upstream_limit gauge\nxs2a_upstream_limit{pool="core"} 12\nxs2a_upstream_limit{pool="core:writes"} 2\n',
  );
});
