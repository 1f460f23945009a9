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
  assert.equal(args.length, 3 + 5 + 4 + 6 + 4);
});

Deno.test("encodeDecision() keeps a claim for its retention, a replay's at least in flight", () => {
  const expiry = (decision: Decision) => encodeDecision(decision, "p:").args[7];
  const replay = idem();
  assert.equal(expiry({ limits: [], idempotency: replay }), String(replay.retentionMs));
  const shortReplay = { ...replay, inflightMs: 5000, retentionMs: 1000 };
  assert.equal(expiry({ limits: [], idempotency: shortReplay }), "5000");
  const unique = { ...shortReplay, mode: "unique" as const };
  assert.equal(expiry({ limits: [], idempotency: unique }), "1000");
});

Deno.test("decodeVerdict() reads the reply's named layout", () => {
  const verdict = decodeVerdict(
    [1700000000000, 0, "claimed", 1, 2, 20000, 0, 1, 1, 1, 4, 1, 3600, 1, 0],
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
    [1, 0, "replay", "201", '[["content-type","application/json"]]', "e30="],
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
    [1, 0],
    [1, 0, "claimed", 1, 2, 20000, 0, 1],
    [1, 0, "claimed", 1, 2, 20000, 0, 1, 1, 1, 4, 1, 3600, 1, 0, 0],
    [1, 0, "replay", "201", "not json", ""],
    [1, 0, "replay", "201", "[]"],
    [1, 0, "claimed"],
  ];
  for (const reply of replies) {
    assert.throws(
      () => decodeVerdict(reply, DECISION),
      StoreUnavailableError,
      JSON.stringify(reply),
    );
  }
});

Deno.test("encodeDecision() refuses a frequency part without exactly three candidate days", () => {
  const short = frequency();
  short.days = short.days.slice(0, 2);
  assert.throws(
    () => encodeDecision({ limits: [], frequency: short }, "p:"),
    { message: "A frequency part needs three candidate days" },
  );
});

Deno.test("decodeVerdict() reads only the parts the decision asked for", () => {
  const limitsOnly: Decision = { limits: [limit()] };
  const verdict = decodeVerdict([5, 0, "none", 1, 3, 100, 0, 1], limitsOnly);
  assert.deepEqual(verdict, {
    now: 5,
    blocked: false,
    limits: [{ allowed: true, remaining: 3, resetMs: 100, retryMs: 0 }],
  });
  // A lease granted beyond the request's own.
  const leased = decodeVerdict([5, 0, "none", 1, 3, 100, 0, 4], { limits: [limit({ want: 8 })] });
  assert.equal(leased.limits[0].granted, 4);
  assert.equal("idempotency" in verdict, false);
  assert.equal("frequency" in verdict, false);
  // A replay without headers has none.
  const replay = decodeVerdict([1, 0, "replay", "204", "", ""], DECISION);
  assert.deepEqual(replay.idempotency?.response, { status: 204, headers: [], body: "" });
  // The counter of the day the read was counted on.
  const counted = decodeVerdict(
    [1, 0, "claimed", 1, 2, 20000, 0, 1, 1, 1, 4, 1, 3600, 1, 2],
    DECISION,
  );
  assert.equal(counted.frequency?.counter, DECISION.frequency!.days[1].key);
  // A decision its X-Request-ID stopped ends at its outcome.
  const stopped = decodeVerdict([1, 1, "duplicate"], DECISION);
  assert.deepEqual(stopped, {
    now: 1,
    blocked: true,
    idempotency: { outcome: "duplicate" },
    limits: [],
  });
});

Deno.test("decodeVerdict() refuses a reply with a part too many or a day it did not offer", () => {
  const replies: [unknown, Decision][] = [
    [[1, 0, "claimed", 1, 2, 20000, 0, 1, 1, 1, 4, 1, 3600, 1, 0, 5], DECISION],
    [[1, 0, "none", 1, 1, 4, 1, 3600, 1, 1], { limits: [] }],
    [[1, 0, "claimed", 1, 2, 20000, 0, 1, 1, 1, 4, 1, 3600, 1, 4], DECISION],
    [[1, 1, "none"], { limits: [limit()] }],
  ];
  for (const [reply, decision] of replies) {
    assert.throws(() => decodeVerdict(reply, decision), (error: unknown) => {
      assert.ok(error instanceof StoreUnavailableError, String(error));
      assert.equal(error.message, "The store answered the decision in an unexpected form");
      return true;
    }, JSON.stringify(reply));
  }
});
