import assert from "node:assert/strict";
import { endOfTurn } from "../../../src/lib/turn.ts";

Deno.test("endOfTurn() gives every caller of one turn the same promise, and ends", async () => {
  const first = endOfTurn();
  assert.equal(endOfTurn(), first);
  assert.equal(await first, undefined);
});

Deno.test("endOfTurn() after a turn ended waits for the next one", async () => {
  const first = endOfTurn();
  await first;
  const second = endOfTurn();
  assert.notEqual(second, first);
  let ended = false;
  const waited = second.then(() => ended = true);
  // Work already queued for this turn (promise continuations) runs before the turn ends.
  await Promise.resolve();
  assert.equal(ended, false);
  await waited;
  assert.equal(ended, true);
});

Deno.test("endOfTurn() lets the callbacks of one turn reach it before any of them goes on", async () => {
  const order: string[] = [];
  // Three callbacks of one turn, as requests that arrived together (each its own task, with its
  // promise continuations run before the next one starts).
  const done = [1, 2, 3].map((n) =>
    new Promise<void>((settled) =>
      setTimeout(async () => {
        order.push(`reached ${n}`);
        await endOfTurn();
        order.push(`went on ${n}`);
        settled();
      }, 0)
    )
  );
  await Promise.all(done);
  assert.deepEqual(order, [
    "reached 1",
    "reached 2",
    "reached 3",
    "went on 1",
    "went on 2",
    "went on 3",
  ]);
});
