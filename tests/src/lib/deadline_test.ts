import assert from "node:assert/strict";
import { deadlineSignal, onDeadline, sliceWidth, withDeadline } from "../../../src/lib/deadline.ts";

/** Resolves when the signal aborts; a referenced timer keeps the test's event loop alive. */
function aborted(signal: AbortSignal): Promise<number> {
  const guard = setTimeout(() => {}, 5000);
  return new Promise((resolve) =>
    signal.addEventListener("abort", () => {
      clearTimeout(guard);
      resolve(performance.now());
    })
  );
}

Deno.test("deadlineSignal() shares one signal within a slice and fires with a TimeoutError", async () => {
  const start = performance.now();
  const a = deadlineSignal(100, start);
  const b = deadlineSignal(100, start + sliceWidth(100) / 2);
  assert.equal(a, b, "requests of one slice share a signal");
  const later = deadlineSignal(100, start + sliceWidth(100));
  const other = deadlineSignal(200, start);
  assert.notEqual(later, a, "a new slice has its own");
  assert.notEqual(other, a, "another deadline has its own");
  const [firedA] = await Promise.all([aborted(a), aborted(later), aborted(other)]);
  assert.ok(firedA - start >= 100, `fired after ${firedA - start} ms, not before the deadline`);
  assert.equal((a.reason as DOMException).name, "TimeoutError");
});

Deno.test("sliceWidth() is a tenth of the deadline, at most 50 ms", () => {
  assert.equal(sliceWidth(100), 10);
  assert.equal(sliceWidth(500), 50);
  assert.equal(sliceWidth(10_000), 50);
  assert.equal(sliceWidth(5), 1);
});

Deno.test("onDeadline() calls back after the deadline unless cleared first", async () => {
  const guard = setTimeout(() => {}, 5000);
  const start = performance.now();
  let firedAfterClear = false;
  const clear = onDeadline(60, () => firedAfterClear = true);
  const fired = new Promise<number>((resolve) => onDeadline(60, () => resolve(performance.now())));
  clear();
  const at = await fired;
  clearTimeout(guard);
  assert.ok(at - start >= 60, `fired after ${at - start} ms, not before the deadline`);
  assert.ok(at - start < 60 + sliceWidth(60) + 200, `fired after ${at - start} ms`);
  assert.equal(firedAfterClear, false, "a cleared callback is not called");
});

Deno.test("withDeadline() passes the outcome on, or the timeout's error once the deadline passed", async () => {
  const guard = setTimeout(() => {}, 5000);
  const late = () => new Error("late");
  assert.equal(await withDeadline(Promise.resolve(7), 50, late), 7);
  await assert.rejects(withDeadline(Promise.reject(new Error("own")), 50, late), /own/);
  const start = performance.now();
  await assert.rejects(withDeadline(new Promise(() => {}), 50, late), /late/);
  clearTimeout(guard);
  assert.ok(performance.now() - start >= 50, "not before the deadline");
});

Deno.test("onDeadline() fires every callback of a slice even when one throws", async () => {
  const guard = setTimeout(() => {}, 5000);
  const start = performance.now();
  const calls: string[] = [];
  onDeadline(40, () => {
    calls.push("failing");
    throw new Error("a failing callback");
  });
  const fired = new Promise<number>((resolve) =>
    onDeadline(40, () => {
      calls.push("next");
      resolve(performance.now());
    })
  );
  let giveUp: ReturnType<typeof setTimeout> | undefined;
  const gaveUp = new Promise<undefined>((resolve) => {
    giveUp = setTimeout(() => resolve(undefined), 2000);
  });
  const at = await Promise.race([fired, gaveUp]);
  clearTimeout(giveUp);
  clearTimeout(guard);
  assert.ok(at !== undefined, "the callback after the failing one was not called within 2 s");
  assert.deepEqual(calls, ["failing", "next"], "both callbacks of the slice, in order");
  assert.ok(at - start >= 40, `fired after ${at - start} ms, not before the deadline`);
});
