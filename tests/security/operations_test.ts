/**
 * Attacks on the gateway's operation: its own endpoints and its resources (issue 18, items 11
 * and 19). Each test asserts what the attacker gets and what reached the core.
 */
import assert from "node:assert/strict";
import { startGateway } from "../support/gateway.ts";
import { passthroughPolicy } from "../support/policies.ts";
import { startUpstream } from "../support/upstream.ts";

Deno.test("operations: a flood of /readyz probes the core at most once per interval", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({
    policy: passthroughPolicy({ sections: { readiness: { interval_ms: 400 } } }),
    upstream: upstream.url,
  });
  const probes = () => upstream.received.filter((r) => r.path === "/").length;
  const flood = async (n: number) => {
    const answers = await Promise.all(
      Array.from({ length: n }, () => gateway.fetch("/readyz").then((r) => r.json())),
    );
    return answers.map((a) => a.status);
  };
  // Concurrent and sequential calls inside one interval: one probe, every caller answered.
  assert.deepEqual(new Set(await flood(50)), new Set(["ready"]));
  for (let i = 0; i < 10; i++) await flood(1);
  assert.equal(probes(), 1, "one probe reached the core");
  // After the interval, the next call probes again, once.
  await new Promise((r) => setTimeout(r, 450));
  await flood(20);
  assert.equal(probes(), 2);
});
