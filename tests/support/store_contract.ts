/**
 * The behaviour every store backend must have, as one suite run against each of them (memory,
 * Redis, Upstash): the same decisions, the same answers.
 */
import assert from "node:assert/strict";
import {
  type Decision,
  type FrequencyPart,
  type IdempotencyPart,
  type LimitPart,
  type Store,
  type StoredResponse,
  StoreUnavailableError,
} from "../../src/store/types.ts";

/**
 * Asserts that `store` makes no decision (StoreUnavailableError: unreachable, untrusted, refused),
 * then closes it unless `close` is false. Resolves to the error, whose message tells a refusal
 * from the store's deadline.
 */
export async function assertNoDecision(
  store: Store,
  options: { close?: boolean } = {},
): Promise<StoreUnavailableError> {
  try {
    const error = await store.decide({ limits: [limit()] }).then(
      () => assert.fail("a decision was made"),
      (error: unknown) => error,
    );
    assert.ok(error instanceof StoreUnavailableError, String(error));
    return error;
  } finally {
    if (options.close !== false) await store.close();
  }
}

/** Claims `part` on `store` and completes it with `response`: an answer kept for a replay. */
export async function keepAnswer(
  store: Store,
  part: IdempotencyPart,
  response: StoredResponse,
): Promise<void> {
  assert.equal(
    (await store.decide({ idempotency: part, limits: [] })).idempotency?.outcome,
    "claimed",
  );
  await store.complete({
    key: part.key,
    token: part.token,
    action: "done",
    response,
    retentionMs: part.retentionMs,
  });
}

/**
 * Claims an X-Request-ID on the store `open()` makes, completes it with `response`, closes it and
 * opens the store again: the new one must replay the answer whole (a store that keeps its state
 * in a file). Closes the second store.
 */
export async function assertReplayAfterReopen(
  open: () => Store | Promise<Store>,
  response: StoredResponse,
): Promise<void> {
  const first = await open();
  await keepAnswer(first, idem(), response);
  await first.close();
  const second = await open();
  try {
    const again = await second.decide({ idempotency: idem(), limits: [limit()] });
    assert.equal(again.idempotency?.outcome, "replay");
    assert.deepEqual(again.idempotency?.response, response);
  } finally {
    await second.close();
  }
}

/** Makes a fresh store (its own key space) for one test. */
export type StoreFactory = () => Promise<Store>;

const DAY = 86_400_000;

export function idem(overrides: Partial<IdempotencyPart> = {}): IdempotencyPart {
  return {
    key: "idem:tpp:1",
    mode: "replay",
    fingerprint: "fp-1",
    token: crypto.randomUUID(),
    enforce: true,
    inflightMs: 60_000,
    retentionMs: 60_000,
    ...overrides,
  };
}

export function limit(overrides: Partial<LimitPart> = {}): LimitPart {
  return {
    name: "per_tpp",
    key: "rl:per_tpp:tpp",
    limit: 3,
    windowMs: 60_000,
    burst: 3,
    enforce: true,
    ...overrides,
  };
}

/** A frequency part whose middle candidate day spans now. */
export function frequency(overrides: Partial<FrequencyPart> = {}): FrequencyPart {
  const today = Math.floor(Date.now() / DAY) * DAY;
  return {
    consentKey: "consent:c1",
    days: [-1, 0, 1].map((k) => ({
      key: `freq:c1:${k}:/v1/accounts`,
      start: today + k * DAY,
      end: today + (k + 1) * DAY,
    })),
    max: 4,
    unknownLimit: 0,
    psuInitiated: false,
    enforce: true,
    ...overrides,
  };
}

function decision(parts: Partial<Decision>): Decision {
  return { limits: [], ...parts };
}

/** Registers the contract tests of one backend. */
export function storeContract(
  name: string,
  make: StoreFactory,
  options: { ignore?: boolean } = {},
): void {
  const test = (title: string, fn: (store: Store) => Promise<void>) =>
    Deno.test({
      name: `${name}: ${title}`,
      ignore: options.ignore,
      async fn() {
        const store = await make();
        try {
          await fn(store);
        } finally {
          await store.close();
        }
      },
    });

  test("claims a new X-Request-ID, then finds it in flight, then replays the answer", async (s) => {
    const first = idem();
    const claimed = await s.decide(decision({ idempotency: first }));
    assert.equal(claimed.idempotency?.outcome, "claimed");
    assert.equal(claimed.blocked, false);
    assert.ok(Math.abs(claimed.now - Date.now()) < 5000, "the store's clock");
    const again = await s.decide(decision({ idempotency: idem() }));
    assert.equal(again.idempotency?.outcome, "inflight");
    assert.equal(again.blocked, true);
    const other = await s.decide(decision({ idempotency: idem({ fingerprint: "fp-2" }) }));
    assert.equal(other.idempotency?.outcome, "mismatch");
    const response = {
      status: 201,
      headers: [["content-type", "application/json"]] as [string, string][],
      body: btoa('{"paymentId":"p1"}'),
    };
    await s.complete({
      key: first.key,
      token: first.token,
      action: "done",
      response,
      retentionMs: 60_000,
    });
    const replay = await s.decide(decision({ idempotency: idem(), limits: [limit()] }));
    assert.equal(replay.idempotency?.outcome, "replay");
    assert.deepEqual(replay.idempotency?.response, response);
    assert.deepEqual(replay.limits, [], "a replay counts nothing");
  });

  test("completes only with the owner's token, and a release frees the id", async (s) => {
    const first = idem();
    await s.decide(decision({ idempotency: first }));
    await s.complete({ key: first.key, token: "not-the-owner", action: "release", retentionMs: 1 });
    assert.equal(
      (await s.decide(decision({ idempotency: idem() }))).idempotency?.outcome,
      "inflight",
    );
    await s.complete({ key: first.key, token: first.token, action: "release", retentionMs: 1 });
    assert.equal(
      (await s.decide(decision({ idempotency: idem() }))).idempotency?.outcome,
      "claimed",
    );
  });

  test("a marker past its in-flight time is unknown, never claimed again, still completed by its owner", async (s) => {
    const first = idem({ inflightMs: 40 });
    assert.equal(
      (await s.decide(decision({ idempotency: first }))).idempotency?.outcome,
      "claimed",
    );
    await new Promise((resolve) => setTimeout(resolve, 120));
    const late = await s.decide(
      decision({ idempotency: idem({ inflightMs: 40 }), limits: [limit()] }),
    );
    assert.equal(late.idempotency?.outcome, "unknown");
    assert.equal(late.blocked, true);
    assert.deepEqual(late.limits, [], "an unknown outcome counts nothing");
    await s.complete({
      key: first.key,
      token: first.token,
      action: "done",
      response: { status: 201, headers: [], body: btoa("{}") },
      retentionMs: 60_000,
    });
    assert.equal(
      (await s.decide(decision({ idempotency: idem() }))).idempotency?.outcome,
      "replay",
    );
  });

  test("keeps and replays an answer larger than one value of Deno KV (64 KiB)", async (s) => {
    const first = idem();
    await s.decide(decision({ idempotency: first }));
    // The largest answer idempotency keeps by default (max_body_bytes 65536), in base64.
    const body = btoa("x".repeat(65_536));
    const response = { status: 201, headers: [["x-a", "1"]] as [string, string][], body };
    await s.complete({ ...first, action: "done", response, retentionMs: 60_000 });
    const replay = await s.decide(decision({ idempotency: idem() }));
    assert.equal(replay.idempotency?.outcome, "replay");
    assert.equal(replay.idempotency?.response?.body.length, body.length);
    assert.deepEqual(replay.idempotency?.response, response);
  });

  test("remembers an answer too large to keep as gone", async (s) => {
    const first = idem();
    await s.decide(decision({ idempotency: first }));
    await s.complete({ key: first.key, token: first.token, action: "gone", retentionMs: 60_000 });
    assert.equal((await s.decide(decision({ idempotency: idem() }))).idempotency?.outcome, "gone");
  });

  test("unique mode: any reuse is a duplicate", async (s) => {
    const part = idem({ mode: "unique" });
    assert.equal((await s.decide(decision({ idempotency: part }))).idempotency?.outcome, "claimed");
    const again = await s.decide(decision({ idempotency: idem({ mode: "unique" }) }));
    assert.equal(again.idempotency?.outcome, "duplicate");
    assert.equal(again.blocked, true);
  });

  test("an id used in unique mode (no fingerprint kept) is a duplicate in replay mode too", async (s) => {
    const part = idem({ mode: "unique", fingerprint: "", token: "" });
    assert.equal((await s.decide(decision({ idempotency: part }))).idempotency?.outcome, "claimed");
    for (const fingerprint of ["", "fp-1"]) {
      const again = await s.decide(decision({ idempotency: idem({ fingerprint }) }));
      assert.equal(again.idempotency?.outcome, "duplicate");
      assert.equal(again.blocked, true);
    }
  });

  test("a reuse in report mode does not stop the limits", async (s) => {
    await s.decide(decision({ idempotency: idem() }));
    const again = await s.decide(
      decision({ idempotency: idem({ fingerprint: "x", enforce: false }), limits: [limit()] }),
    );
    assert.equal(again.idempotency?.outcome, "mismatch");
    assert.equal(again.blocked, false);
    assert.equal(again.limits.length, 1);
    assert.equal(again.limits[0].remaining, 2);
  });

  test("GCRA: limit requests pass at once with falling remaining, the next is rejected", async (s) => {
    const results = [];
    for (let i = 0; i < 4; i++) {
      results.push((await s.decide(decision({ limits: [limit()] }))).limits[0]);
    }
    assert.deepEqual(results.map((r) => r.allowed), [true, true, true, false]);
    assert.deepEqual(results.slice(0, 3).map((r) => r.remaining), [2, 1, 0]);
    assert.equal(results[3].remaining, 0);
    // One request refills every 20 s.
    assert.ok(
      results[3].retryMs > 19_000 && results[3].retryMs <= 20_000,
      String(results[3].retryMs),
    );
    assert.ok(
      results[2].resetMs > 59_000 && results[2].resetMs <= 60_000,
      String(results[2].resetMs),
    );
  });

  test("grants a lease of at most a quarter of what the limit allows, one near the limit", async (s) => {
    const wide = limit({ key: "rl:lease", limit: 100, burst: 100, want: 16 });
    const grants = [];
    const remaining = [];
    for (let i = 0; i < 9; i++) {
      const result = (await s.decide(decision({ limits: [wide] }))).limits[0];
      assert.equal(result.allowed, true);
      grants.push(result.granted ?? 1);
      remaining.push(result.remaining);
    }
    // 100 allowed: 16 (cap), then 84 -> 16, 68 -> 16, 52 -> 13, 39 -> 9, 30 -> 7, 23 -> 5, ...
    assert.deepEqual(grants, [16, 16, 16, 13, 9, 7, 5, 4, 3]);
    assert.deepEqual(remaining, [84, 68, 52, 39, 30, 23, 18, 14, 11]);
    for (let i = 0; i < 20; i++) {
      const result = (await s.decide(decision({ limits: [wide] }))).limits[0];
      if (!result.allowed) break;
      grants.push(result.granted ?? 1);
    }
    // Every request granted counted: the 100 are spent, the last ones one at a time.
    assert.equal(grants.reduce((sum, granted) => sum + granted, 0), 100);
    assert.deepEqual(grants.slice(-4), [1, 1, 1, 1]);
    const over = (await s.decide(decision({ limits: [wide] }))).limits[0];
    assert.equal(over.allowed, false);
    // Without want, one at a time (and no grant beyond it).
    const single = (await s.decide(decision({ limits: [limit({ key: "rl:one", limit: 100 })] })))
      .limits[0];
    assert.equal(single.granted ?? 1, 1);
    assert.equal(single.remaining, 2);
  });

  test("a rejected request consumes nothing and claims nothing", async (s) => {
    const tight = limit({ key: "rl:tight", limit: 1, burst: 1 });
    const wide = limit({ key: "rl:wide", limit: 10, burst: 10 });
    assert.equal((await s.decide(decision({ limits: [tight, wide] }))).blocked, false);
    for (let i = 0; i < 3; i++) {
      const rejected = await s.decide(
        decision({ limits: [tight, wide], idempotency: idem({ key: `idem:r${i}` }) }),
      );
      assert.equal(rejected.blocked, true);
      assert.equal(rejected.limits[0].allowed, false);
      assert.equal(rejected.idempotency?.outcome, "free");
    }
    const wideAlone = await s.decide(decision({ limits: [wide] }));
    assert.equal(wideAlone.limits[0].remaining, 8, "only the two allowed requests count");
    const retried = await s.decide(decision({ idempotency: idem({ key: "idem:r0" }) }));
    assert.equal(retried.idempotency?.outcome, "claimed", "the rejected id was not claimed");
  });

  test("a limit in report mode lets the request through without counting it", async (s) => {
    const soft = limit({ limit: 1, burst: 1, enforce: false });
    await s.decide(decision({ limits: [soft] }));
    const over = await s.decide(decision({ limits: [soft], idempotency: idem() }));
    assert.equal(over.blocked, false);
    assert.equal(over.limits[0].allowed, false);
    assert.equal(over.idempotency?.outcome, "claimed");
  });

  test("counts TPP-initiated reads of a recurring consent up to min(frequencyPerDay, max)", async (s) => {
    await s.put("consent:c1", "1|6", 60_000);
    const seen = [];
    for (let i = 0; i < 5; i++) {
      seen.push((await s.decide(decision({ frequency: frequency() }))).frequency!);
    }
    assert.deepEqual(seen.map((f) => f.allowed), [true, true, true, true, false]);
    assert.deepEqual(seen.map((f) => f.used), [1, 2, 3, 4, 4]);
    assert.equal(seen[0].limit, 4);
    assert.equal(seen[0].known, true);
    assert.ok(seen[4].retryMs > 0 && seen[4].retryMs <= DAY);
    const psu = (await s.decide(decision({ frequency: frequency({ psuInitiated: true }) })))
      .frequency!;
    assert.equal(psu.counted, false, "PSU-initiated reads of a recurring consent are not counted");
    const other = frequency({
      days: frequency().days.map((d) => ({ ...d, key: d.key + "/balances" })),
    });
    assert.equal(
      (await s.decide(decision({ frequency: other }))).frequency!.allowed,
      true,
      "per resource",
    );
  });

  test("a one-off consent allows one read, PSU-initiated or not", async (s) => {
    await s.put("consent:c1", "0|1", 60_000);
    const first = (await s.decide(decision({ frequency: frequency({ psuInitiated: true }) })))
      .frequency!;
    assert.deepEqual([first.counted, first.allowed, first.limit], [true, true, 1]);
    const second = await s.decide(decision({ frequency: frequency() }));
    assert.equal(second.frequency!.allowed, false);
    assert.equal(second.blocked, true);
  });

  test("an unknown consent is not counted, unless a default cap is set", async (s) => {
    const free = (await s.decide(decision({ frequency: frequency() }))).frequency!;
    assert.deepEqual([free.counted, free.known], [false, false]);
    const capped = () => s.decide(decision({ frequency: frequency({ unknownLimit: 1 }) }));
    assert.equal((await capped()).frequency!.allowed, true);
    assert.equal((await capped()).frequency!.allowed, false);
  });

  test("the store's clock picks the day: another day has its own count", async (s) => {
    await s.put("consent:c1", "0|1", 60_000);
    await s.decide(decision({ frequency: frequency() }));
    assert.equal((await s.decide(decision({ frequency: frequency() }))).frequency!.allowed, false);
    // Shift the candidate days so that "now" falls in a day with other keys.
    const shifted = frequency().days.map((d, i) => ({
      key: `freq:c1:other${i}`,
      start: d.start,
      end: d.end,
    }));
    assert.equal(
      (await s.decide(decision({ frequency: frequency({ days: shifted }) }))).frequency!.allowed,
      true,
    );
  });

  test("the store's clock picks the first or the third candidate day when it falls there", async (s) => {
    await s.put("consent:c1", "1|4", 60_000);
    // The gateway's clock a day ahead of the store's, then a day behind: now is in day 1, day 3.
    for (const [shift, index] of [[DAY, 0], [-DAY, 2]] as const) {
      const days = frequency().days.map((d) => ({
        key: `${d.key}@${shift}`,
        start: d.start + shift,
        end: d.end + shift,
      }));
      const counted = (await s.decide(decision({ frequency: frequency({ days }) }))).frequency!;
      assert.equal(counted.counter, days[index].key, `day ${index + 1}`);
      assert.ok(Math.abs(counted.retryMs - (days[index].end - Date.now())) < 5_000, "its end");
    }
  });

  test("names the day counter a read was counted in, and a refund takes it back (never below 0)", async (s) => {
    await s.put("consent:c1", "1|2", 60_000);
    const first = (await s.decide(decision({ frequency: frequency() }))).frequency!;
    assert.equal(first.counter, frequency().days[1].key, "today's counter");
    const second = (await s.decide(decision({ frequency: frequency() }))).frequency!;
    assert.equal(second.used, 2);
    const over = (await s.decide(decision({ frequency: frequency() }))).frequency!;
    assert.deepEqual([over.allowed, over.counter], [false, undefined], "not counted: no counter");
    await s.refund(second.counter!);
    const again = (await s.decide(decision({ frequency: frequency() }))).frequency!;
    assert.deepEqual([again.allowed, again.used], [true, 2], "the refunded read is free again");
    for (let i = 0; i < 4; i++) await s.refund(first.counter!);
    const psu = (await s.decide(decision({ frequency: frequency({ psuInitiated: true }) })))
      .frequency!;
    assert.equal(psu.counter, undefined, "a read not counted names no counter");
    const afterRefunds = (await s.decide(decision({ frequency: frequency() }))).frequency!;
    assert.equal(afterRefunds.used, 1, "refunds stop at zero");
    await s.refund("freq:never-counted");
    const blocked = await s.decide(
      decision({ frequency: frequency(), limits: [limit({ limit: 1, burst: 1, key: "rl:x" })] }),
    );
    assert.equal(blocked.frequency!.counter, frequency().days[1].key, "allowed: counted");
    await s.refund(first.counter!);
    const rejected = await s.decide(
      decision({ frequency: frequency(), limits: [limit({ limit: 1, burst: 1, key: "rl:x" })] }),
    );
    assert.equal(rejected.blocked, true);
    assert.equal(rejected.frequency!.allowed, true);
    assert.equal(rejected.frequency!.counter, undefined, "blocked by a limit: not counted");
  });

  test("a deleted or expired consent is unknown again", async (s) => {
    await s.put("consent:c1", "0|1", 60_000);
    await s.delete("consent:c1");
    assert.equal((await s.decide(decision({ frequency: frequency() }))).frequency!.known, false);
    await s.put("consent:c1", "0|1", 30);
    await new Promise((r) => setTimeout(r, 60));
    assert.equal((await s.decide(decision({ frequency: frequency() }))).frequency!.known, false);
  });

  test("get() answers a value put, and nothing once it was deleted or expired", async (s) => {
    assert.equal(await s.get("scope:c1"), undefined);
    await s.put("scope:c1", '{"t":"tpp-1"}', 60_000);
    assert.equal(await s.get("scope:c1"), '{"t":"tpp-1"}');
    await s.delete("scope:c1");
    assert.equal(await s.get("scope:c1"), undefined);
    await s.put("scope:c1", "x", 30);
    await new Promise((r) => setTimeout(r, 60));
    assert.equal(await s.get("scope:c1"), undefined);
  });

  test("50 concurrent decisions on one X-Request-ID claim it exactly once", async (s) => {
    const outcomes = await Promise.all(
      Array.from(
        { length: 50 },
        () =>
          s.decide(decision({ idempotency: idem(), limits: [limit({ limit: 100, burst: 100 })] })),
      ),
    );
    assert.equal(outcomes.filter((o) => o.idempotency?.outcome === "claimed").length, 1);
    assert.equal(outcomes.filter((o) => o.idempotency?.outcome === "inflight").length, 49);
  });

  test("counts one round trip per decision", async (s) => {
    await s.decide(decision({ idempotency: idem(), limits: [limit()], frequency: frequency() }));
    const before = s.stats.roundTrips;
    await s.decide(
      decision({
        idempotency: idem({ key: "idem:2" }),
        limits: [limit(), limit({ key: "rl:b" })],
        frequency: frequency(),
      }),
    );
    assert.equal(s.stats.roundTrips - before, 1);
  });
}
