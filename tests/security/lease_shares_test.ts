/**
 * The lease table is one per gateway process and store, shared by every caller: a caller that
 * sends requests under 10,000 limit keys of its own (a PSU-ID per request on a per-PSU limit) must
 * not push another TPP's lease out of it. A pushed-out lease's requests were already counted in the
 * store, so the other TPP would lose up to a second of its quota each time. Now a full table of
 * live leases grants no new one: the flooding caller's requests ask the store one by one.
 */
import assert from "node:assert/strict";
import { Leases } from "../../src/store/leases.ts";

const NOW = 1_800_000_000_000;

Deno.test("a caller flooding the lease table with its own keys never takes another TPP's lease", () => {
  const leases = new Leases();
  const grant = { allowed: true, remaining: 100, resetMs: 1000, retryMs: 0, granted: 9 };
  assert.equal(leases.ask("rl:per_tpp:PSDGE-NBG-1", NOW), true);
  leases.keep("rl:per_tpp:PSDGE-NBG-1", grant, NOW);
  leases.answered("rl:per_tpp:PSDGE-NBG-1");
  for (let i = 0; i < 20_000; i++) {
    const key = `rl:per_psu:PSDGE-NBG-2:psu-${i}`;
    if (!leases.ask(key, NOW + 1)) continue;
    leases.keep(key, { ...grant, granted: 2 }, NOW + 1);
    leases.answered(key);
  }
  let left = 0;
  while (leases.take("rl:per_tpp:PSDGE-NBG-1", NOW + 2)) left++;
  assert.equal(left, 8, "the first TPP's eight leased requests are all still its own");
});
