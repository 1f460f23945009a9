import assert from "node:assert/strict";
import { type Decision, type Verdict, verdictProblem } from "../../../src/store/types.ts";
import { MemoryStore } from "../../../src/store/memory.ts";
import { frequency, idem, limit } from "../../support/store_contract.ts";

function decision(parts: Partial<Decision> = {}): Decision {
  return { idempotency: idem(), limits: [limit()], frequency: frequency(), ...parts };
}

Deno.test("verdictProblem() accepts what a store answers", async () => {
  const store = new MemoryStore();
  const first = decision();
  assert.equal(verdictProblem(first, await store.decide(first)), undefined);
  const again = decision();
  assert.equal(verdictProblem(again, await store.decide(again)), undefined, "inflight: blocked");
  const plain = decision({ idempotency: undefined, frequency: undefined });
  assert.equal(verdictProblem(plain, await store.decide(plain)), undefined);
});

Deno.test("verdictProblem() refuses an outcome, a part or a count it does not know", () => {
  const asked = decision({ frequency: undefined });
  const good: Verdict = {
    now: Date.now(),
    blocked: false,
    idempotency: { outcome: "claimed" },
    limits: [{ allowed: true, remaining: 2, resetMs: 20_000, retryMs: 0 }],
  };
  assert.equal(verdictProblem(asked, good), undefined);
  const bad: [string, Verdict][] = [
    ["unknown outcome", { ...good, idempotency: { outcome: "ok" as "claimed" } }],
    ["no outcome", { ...good, idempotency: undefined }],
    ["limit missing", { ...good, limits: [] }],
    ["limit too many", { ...good, limits: [...good.limits, ...good.limits] }],
    ["count not a number", {
      ...good,
      limits: [{ allowed: true, remaining: NaN, resetMs: 0, retryMs: 0 }],
    }],
    ["flag not a boolean", {
      ...good,
      limits: [{ allowed: 1 as unknown as boolean, remaining: 1, resetMs: 0, retryMs: 0 }],
    }],
    ["rejected, not blocked", {
      ...good,
      idempotency: { outcome: "free" },
      limits: [{ allowed: false, remaining: 0, resetMs: 1, retryMs: 1 }],
    }],
    ["blocked, nothing rejected", { ...good, blocked: true, idempotency: { outcome: "free" } }],
    ["free, not blocked", { ...good, idempotency: { outcome: "free" } }],
    ["claimed, blocked", {
      ...good,
      blocked: true,
      limits: [{ allowed: false, remaining: 0, resetMs: 1, retryMs: 1 }],
    }],
    ["counter not asked for", {
      ...good,
      frequency: { counted: false, allowed: true, limit: 0, used: 0, retryMs: 0, known: false },
    }],
    ["replay without its answer", { ...good, idempotency: { outcome: "replay" }, limits: [] }],
    ["replay with a body not base64", {
      ...good,
      idempotency: { outcome: "replay", response: { status: 201, headers: [], body: "%%" } },
      limits: [],
    }],
  ];
  for (const [label, verdict] of bad) {
    assert.equal(typeof verdictProblem(asked, verdict), "string", label);
  }
});
