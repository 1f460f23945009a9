import assert from "node:assert/strict";
import { CircuitBreaker } from "../../../src/upstream/breaker.ts";
import { Breakers } from "../../../src/upstream/breakers.ts";

const CONFIG = { failures: 2, windowMs: 1000, minRequests: 4, openMs: 100 };

Deno.test("CircuitBreaker opens after failures in a row, half-opens after openMs and closes on a probe's success", () => {
  const changes: string[] = [];
  const breaker = new CircuitBreaker(CONFIG);
  breaker.onChange = (from, to) => changes.push(`${from}>${to}`);
  breaker.record(0, true, false);
  breaker.record(1, false, false); // a success resets the row
  breaker.record(2, true, false);
  assert.equal(breaker.state(2), "closed");
  breaker.record(3, true, false);
  assert.equal(breaker.state(3), "open");
  assert.deepEqual(breaker.admit(50), { retryMs: 53 });
  assert.equal(breaker.state(103), "half-open");
  assert.deepEqual(breaker.admit(103), { probe: true });
  assert.deepEqual(breaker.admit(104), { retryMs: 1000 });
  breaker.record(110, false, true);
  assert.equal(breaker.state(110), "closed");
  assert.deepEqual(changes, ["closed>open", "open>half-open", "half-open>closed"]);
});

Deno.test("CircuitBreaker frees the probe of a request that never reached the core", () => {
  const breaker = new CircuitBreaker({ ...CONFIG, failures: 1 });
  breaker.record(0, true, false);
  assert.deepEqual(breaker.admit(100), { probe: true });
  breaker.cancel(true);
  assert.deepEqual(breaker.admit(101), { probe: true });
});

Deno.test("CircuitBreaker judges failureRatio only over the window and after minRequests", () => {
  const breaker = new CircuitBreaker({ ...CONFIG, failures: undefined, failureRatio: 0.5 });
  breaker.record(0, true, false);
  breaker.record(1, true, false);
  breaker.record(2, false, false);
  assert.equal(breaker.state(2), "closed"); // three outcomes: below minRequests
  // Two seconds later the old outcomes are out of the window.
  breaker.record(2000, false, false);
  breaker.record(2001, false, false);
  breaker.record(2002, false, false);
  breaker.record(2003, true, false);
  assert.equal(breaker.state(2003), "closed"); // one in four
  breaker.record(2004, true, false);
  assert.equal(breaker.state(2004), "closed"); // two in five
  breaker.record(2005, true, false);
  assert.equal(breaker.state(2005), "open"); // three in six
});

Deno.test("Breakers share one breaker by name and config and report the origin's worst state", () => {
  const breakers = new Breakers();
  assert.equal(breakers.originState(0), "none");
  const origin = breakers.breaker("http://core", "origin", CONFIG);
  assert.equal(breakers.breaker("http://core", "origin", { ...CONFIG }), origin);
  const op = breakers.breaker("http://core getAccounts", "operation", { ...CONFIG, failures: 1 });
  op.record(0, true, false);
  assert.equal(breakers.originState(0), "closed");
  assert.equal(breakers.openCount(0), 1);
  origin.record(0, true, false);
  origin.record(0, true, false);
  assert.equal(breakers.originState(0), "open");
});

Deno.test("CircuitBreaker judges failureRatio from exactly minRequests outcomes, the ratio reached counting", () => {
  const breaker = new CircuitBreaker({ ...CONFIG, failures: undefined, failureRatio: 0.5 });
  breaker.record(0, false, false);
  breaker.record(1, false, false);
  breaker.record(2, true, false);
  assert.equal(breaker.state(2), "closed", "three outcomes, one under minRequests");
  breaker.record(3, true, false);
  assert.equal(breaker.state(3), "open", "four outcomes, two failed: the ratio reached");
});

Deno.test("CircuitBreaker counts an outcome windowMs old out of the window, one a millisecond younger in", () => {
  // 1005 ms in ten buckets of 101: the bucket that starts at 0 is still in the ring at 1005.
  const config = { ...CONFIG, failures: undefined, failureRatio: 0.5, windowMs: 1005 };
  const at = (now: number) => {
    const breaker = new CircuitBreaker(config);
    for (let i = 0; i < 3; i++) breaker.record(0, true, false);
    breaker.record(now, true, false);
    return breaker.state(now);
  };
  assert.equal(at(1004), "open", "four failures within the window");
  assert.equal(at(1005), "closed", "the three at 0 are out: one outcome, under minRequests");
});
