import assert from "node:assert/strict";
import { LEASE_MS, Leases, leasesOf } from "../../../src/store/leases.ts";
import { MemoryStore } from "../../../src/store/memory.ts";
import type { LimitVerdict } from "../../../src/store/types.ts";

const NOW = 1_800_000_000_000;

/** A store's verdict granting `granted` with `remaining` left and a full quota in `resetMs`. */
function grant(granted: number, remaining = 50, resetMs = 4000): LimitVerdict {
  return { allowed: true, remaining, resetMs, retryMs: 0, granted };
}

Deno.test("Leases counts a grant down, as the store would have answered each request", () => {
  const leases = new Leases();
  leases.keep("rl:a", grant(4, 50, 4000), NOW);
  const seen = [1, 2, 3].map((ms) => leases.take("rl:a", NOW + ms)?.verdict);
  assert.deepEqual(seen, [
    { allowed: true, remaining: 52, resetMs: 3999, retryMs: 0 },
    { allowed: true, remaining: 51, resetMs: 3998, retryMs: 0 },
    { allowed: true, remaining: 50, resetMs: 3997, retryMs: 0 },
  ]);
  assert.equal(leases.take("rl:a", NOW + 4), undefined, "three beyond the granting request");
  assert.equal(leases.take("rl:b", NOW), undefined, "no lease of another key");
  // A reset already passed reads 0, never negative.
  leases.keep("rl:c", grant(2, 0, 5), NOW);
  assert.equal(leases.take("rl:c", NOW + 10)?.verdict.resetMs, 0);
});

Deno.test("Leases keeps nothing of a refusal or of a grant of the request alone", () => {
  const leases = new Leases();
  leases.keep("rl:a", { allowed: false, remaining: 0, resetMs: 10, retryMs: 10, granted: 3 }, NOW);
  leases.keep("rl:b", grant(1), NOW);
  leases.keep("rl:c", { allowed: true, remaining: 5, resetMs: 10, retryMs: 0 }, NOW);
  assert.equal(leases.size, 0);
});

Deno.test("Leases ends a lease at LEASE_MS, and takes a request given back", () => {
  const leases = new Leases();
  leases.keep("rl:a", grant(3), NOW);
  const taken = leases.take("rl:a", NOW + LEASE_MS - 1);
  assert.ok(taken);
  leases.giveBack(taken.lease);
  assert.equal(leases.take("rl:a", NOW + 1)?.verdict.remaining, 51, "two left again");
  assert.equal(leases.take("rl:a", NOW + LEASE_MS), undefined, "ended at LEASE_MS");
  assert.equal(leases.size, 0);
});

Deno.test("Leases adds a grant to a live lease of its key, not to an ended one", () => {
  const leases = new Leases();
  leases.keep("rl:a", grant(3), NOW);
  leases.keep("rl:a", grant(5, 40), NOW + 10);
  const left = [];
  for (let at = NOW + 11; leases.take("rl:a", at); at++) left.push(at);
  assert.equal(left.length, 2 + 4);
  leases.keep("rl:b", grant(3), NOW);
  leases.keep("rl:b", grant(5, 40), NOW + LEASE_MS);
  let count = 0;
  while (leases.take("rl:b", NOW + LEASE_MS + 1)) count++;
  assert.equal(count, 4, "the ended lease's two are not carried over");
});

Deno.test("Leases lets one request at a time ask for a lease of a key", () => {
  const leases = new Leases();
  assert.equal(leases.ask("rl:a", NOW), true);
  assert.equal(leases.ask("rl:a", NOW), false);
  assert.equal(leases.ask("rl:b", NOW), true);
  leases.answered("rl:a");
  assert.equal(leases.ask("rl:a", NOW), true);
});

Deno.test("Leases grants no lease of a new key while 10,000 live ones fill it, and drops none", () => {
  const leases = new Leases();
  for (let i = 0; i < 10_000; i++) {
    assert.equal(leases.ask(`rl:${i}`, NOW), true);
    leases.keep(`rl:${i}`, grant(2), NOW + i / 10);
    leases.answered(`rl:${i}`);
  }
  assert.equal(leases.ask("rl:new", NOW + 999), false, "full of live leases");
  assert.ok(leases.take("rl:0", NOW + 999), "the oldest lease still serves");
  assert.equal(leases.ask("rl:0", NOW + 999), true, "a key with a lease may ask again");
  leases.answered("rl:0");
  // The leases kept first end first and make room.
  assert.equal(leases.ask("rl:new", NOW + LEASE_MS + 1), true);
  assert.equal(leases.size, 10_000 - 11);
});

Deno.test("leasesOf() is one table per store, kept between requests", () => {
  const one = new MemoryStore();
  const two = new MemoryStore();
  leasesOf(one).keep("rl:a", grant(3), NOW);
  assert.equal(leasesOf(one).size, 1);
  assert.equal(leasesOf(two).size, 0);
});
