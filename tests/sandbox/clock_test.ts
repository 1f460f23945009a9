import assert from "node:assert/strict";
import { createClock } from "../../src/sandbox/clock.ts";

Deno.test("createClock() moves with its base and keeps an offset once set or advanced", () => {
  let base = new Date("2025-07-01T10:00:00Z");
  const clock = createClock(() => base);
  assert.equal(clock.now().toISOString(), "2025-07-01T10:00:00.000Z");
  clock.set(new Date("2025-07-02T10:00:00Z"));
  assert.equal(clock.offsetMs(), 86_400_000);
  base = new Date("2025-07-01T10:00:05Z");
  assert.equal(clock.now().toISOString(), "2025-07-02T10:00:05.000Z", "time keeps running");
  clock.advance(-5000);
  assert.equal(clock.now().toISOString(), "2025-07-02T10:00:00.000Z");
  clock.set(undefined);
  assert.equal(clock.now().toISOString(), "2025-07-01T10:00:05.000Z");
});
