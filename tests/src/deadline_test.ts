import assert from "node:assert/strict";
import { deadlineSignal, SLICE_MS } from "../../src/deadline.ts";

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
  const b = deadlineSignal(100, start + SLICE_MS / 2);
  assert.equal(a, b, "requests of one slice share a signal");
  const later = deadlineSignal(100, start + SLICE_MS);
  const other = deadlineSignal(200, start);
  assert.notEqual(later, a, "a new slice has its own");
  assert.notEqual(other, a, "another deadline has its own");
  const [firedA] = await Promise.all([aborted(a), aborted(later), aborted(other)]);
  assert.ok(firedA - start >= 100, `fired after ${firedA - start} ms, not before the deadline`);
  assert.equal((a.reason as DOMException).name, "TimeoutError");
});
