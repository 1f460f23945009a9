/**
 * The bench's chart (bench/chart.ts) is well-formed SVG: every label's text is escaped, so that a
 * viewer draws the whole chart (a bare "<" in a `<= 1.5x` label stopped it at that bar).
 */
import assert from "node:assert/strict";
import { ratioChart } from "../bench/chart.ts";

Deno.test("the chart's labels escape what XML reserves, targets and figures alike", () => {
  const svg = ratioChart([
    { name: "p99 <ratio> & more", ratio: 2, target: 1.5, kind: "max", valid: true },
    { name: "req/s", ratio: 0.9, target: 0.85, kind: "min", valid: true },
    { name: "kv file, req/s", ratio: 0.1, valid: true },
  ], "a <title> & more");
  // Outside tags, no "<" and no bare "&" may remain.
  const text = svg.replace(/<\/?[a-z]+(?:\s[^<>]*)?\/?>/g, "");
  assert.doesNotMatch(text, /[<>]|&(?!(?:lt|gt|amp);)/);
  assert.match(svg, />2\.00x &lt;= 1\.5x missed</);
  assert.match(svg, />0\.10x \(no target\)</);
});
