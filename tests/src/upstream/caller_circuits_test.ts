import assert from "node:assert/strict";
import { CircuitBreaker } from "../../../src/upstream/breaker.ts";
import { CallerCircuits } from "../../../src/upstream/caller_circuits.ts";

const CONFIG = { failures: 2, windowMs: 10_000, minRequests: 10, openMs: 5000 };

function fail(circuits: CallerCircuits, now: number, caller: string, times = 1) {
  for (let i = 0; i < times; i++) circuits.record(now, caller, true, circuits.admit(now, caller));
}

Deno.test("CallerCircuits opens a failing caller's circuit only, until `needed` callers failed within the window", () => {
  const origin = new CircuitBreaker(CONFIG);
  const circuits = new CallerCircuits(origin, { needed: 3 });
  fail(circuits, 0, "A", 2);
  fail(circuits, 1000, "B", 2);
  assert.equal(circuits.state(1001, "A"), "open");
  assert.equal(circuits.state(1001, "B"), "open");
  assert.equal(origin.state(1001), "closed");
  assert.deepEqual(circuits.admit(1001, "C"), { probe: false });
  fail(circuits, 1002, "C", 2);
  assert.equal(origin.state(1003), "open", "three callers failed within the window");
  assert.ok("retryMs" in circuits.admit(1003, "D"));
});

Deno.test("CallerCircuits forgets a caller's opening past the window", () => {
  const origin = new CircuitBreaker(CONFIG);
  const circuits = new CallerCircuits(origin, { needed: 2 });
  fail(circuits, 0, "A", 2);
  fail(circuits, 10_000, "B", 2);
  assert.equal(origin.state(10_001), "closed", "A opened a window ago");
});

Deno.test("CallerCircuits lets a half-open origin's probe decide for every caller", () => {
  const origin = new CircuitBreaker(CONFIG);
  const circuits = new CallerCircuits(origin, { needed: 1 });
  fail(circuits, 0, "A", 2);
  assert.equal(origin.state(1), "open");
  const probe = circuits.admit(5001, "B");
  assert.deepEqual(probe, { probe: "origin" });
  assert.ok("retryMs" in circuits.admit(5001, "C"), "one probe at a time");
  circuits.record(5002, "B", false, probe);
  assert.equal(origin.state(5003), "closed");
  assert.deepEqual(circuits.admit(5003, "C"), { probe: false });
});

Deno.test("CallerCircuits: a caller's own probe after open_for closes its circuit on success", () => {
  const origin = new CircuitBreaker(CONFIG);
  const circuits = new CallerCircuits(origin, { needed: 2 });
  fail(circuits, 0, "A", 2);
  const probe = circuits.admit(5000, "A");
  assert.deepEqual(probe, { probe: "caller" });
  circuits.record(5001, "A", false, probe);
  assert.equal(circuits.state(5002, "A"), "closed");
  assert.equal(origin.state(5002), "closed");
});
