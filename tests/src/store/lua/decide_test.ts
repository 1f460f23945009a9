import assert from "node:assert/strict";
import { decodeVerdict, encodeDecision } from "../../../../src/store/lua/decide.ts";
import { type Decision, StoreUnavailableError } from "../../../../src/store/types.ts";
import { frequency, idem, limit } from "../../../support/store_contract.ts";

const DECISION: Decision = { idempotency: idem(), limits: [limit()], frequency: frequency() };

Deno.test("encodeDecision() puts the counts first and one key per record", () => {
  const { keys, args } = encodeDecision(DECISION, "p:");
  assert.deepEqual(args.slice(0, 3), ["replay", "1", "1"]);
  assert.equal(keys.length, 1 + 1 + 4);
  assert.ok(keys.every((key) => key.startsWith("p:")));
  assert.equal(args.length, 3 + 5 + 3 + 6 + 4);
});

Deno.test("decodeVerdict() reads the reply's named layout", () => {
  const verdict = decodeVerdict(
    [1700000000000, 0, ["claimed", "", "", ""], [[1, 2, 20000, 0]], [1, 1, 4, 1, 3600, 1]],
    DECISION,
  );
  assert.deepEqual(verdict, {
    now: 1700000000000,
    blocked: false,
    idempotency: { outcome: "claimed" },
    limits: [{ allowed: true, remaining: 2, resetMs: 20000, retryMs: 0 }],
    frequency: { counted: true, allowed: true, limit: 4, used: 1, retryMs: 3600, known: true },
  });
  const replay = decodeVerdict(
    [1, 0, ["replay", "201", '[["content-type","application/json"]]', "e30="], [], []],
    DECISION,
  );
  assert.deepEqual(replay.idempotency?.response, {
    status: 201,
    headers: [["content-type", "application/json"]],
    body: "e30=",
  });
});

Deno.test("decodeVerdict() refuses a reply out of shape as a store failure", () => {
  const replies = [
    null,
    "OK",
    [1, 0, ["claimed", "", "", ""], []],
    [1, 0, "claimed", [], []],
    [1, 0, ["claimed", "", "", ""], [5], []],
    [1, 0, ["replay", "201", "not json", ""], [], []],
  ];
  for (const reply of replies) {
    assert.throws(
      () => decodeVerdict(reply, DECISION),
      StoreUnavailableError,
      JSON.stringify(reply),
    );
  }
});
