/**
 * Fault injection at the store: a real redis-server killed (SIGKILL) and restarted while two
 * gateway instances on it take concurrent payment initiations, with X-Request-IDs that are new
 * and repeated. With `idempotency.fail: closed` the outage gives 503 STORE_UNAVAILABLE and nothing
 * reaches the bank; before, during and after it, no X-Request-ID is executed twice at the
 * upstream, and every success a client gets is the answer the bank gave for that id.
 *
 * Redis runs durable (append-only file), as a bank's must: a Redis without persistence comes
 * back empty and forgets which X-Request-IDs were executed (docs/fault_injection.md).
 *
 * Recovery: Redis stopped for 1, 15 and 60 s and started again on the same port, with no traffic,
 * one request a second or bursts in between, append-only on and off: the first request once
 * Redis answers PING again succeeds within 1 s, and so do the ones after it.
 */
import assert from "node:assert/strict";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { passthroughPolicy } from "../support/policies.ts";
import { startRedisServer, storeSetup, WITHOUT_REDIS } from "../support/redis.ts";
import { startUpstream } from "../support/upstream.ts";
import { initiationHeaders, singlePayment } from "../support/requests.ts";
import { tokenIssuer } from "../support/tpp_tokens.ts";
import { waitFor } from "../support/wait.ts";

// Answers are kept for a replay to an identified TPP only.
const issuer = await tokenIssuer();
const TPP = await issuer.headers("PSDGE-NBG-123456");

const PAYMENTS = "/v1/payments/sepa-credit-transfers";
const BODY = JSON.stringify(singlePayment());

type Phase = "before" | "killing" | "outage" | "restarting" | "after" | "final";

/** One client request and what it got. */
interface Outcome {
  id: string;
  /** When it was sent. */
  phase: Phase;
  /** When its answer arrived. */
  answered: Phase;
  gateway: number;
  status: number;
  code?: string;
  retryAfter: string | null;
  replay: boolean;
  paymentId?: string;
  /** The client gave up (no answer within 8 s): a hang. */
  hung?: boolean;
}

function sleep(ms: number) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Waits until `done()` holds, for at most `ms`; returns whether it did. */

/** How Redis goes away: killed and restarted, or frozen (SIGSTOP) and thawed. */
type Outage = "kill" | "freeze";

/** Payments under load through two gateways while Redis goes away and comes back. */
async function underLoad(outage: Outage) {
  await using redis = await startRedisServer({ durable: true });
  await using store = await storeSetup("redis", { url: redis.url, timeoutMs: 250 });

  let phase: Phase = "before";

  // The bank: a new payment per execution, counted per X-Request-ID.
  const issued = new Map<string, string[]>();
  // The phase in which each request reached the bank.
  const arrivals: Phase[] = [];
  let payments = 0;
  await using upstream = startUpstream(async (request) => {
    const id = request.headers.get("x-request-id")!;
    const paymentId = `pay-${++payments}`;
    issued.set(id, [...issued.get(id) ?? [], paymentId]);
    arrivals.push(phase);
    await sleep(15); // a little processing time: requests are in flight when Redis dies
    return Response.json({ transactionStatus: "RCVD", paymentId }, { status: 201 });
  });

  const policy = passthroughPolicy(store.policy, {
    defaults: {
      // X-Test-Phase marks each request for the assertions: forwarded on purpose.
      proxy: { timeout: "2s", forward_headers: ["X-Test-Phase"] },
      bearer_token: issuer.options,
      idempotency: { mode: "enforce", fail: "closed", wait: "300ms", poll: "25ms" },
    },
  });
  const options = { policy, upstream: upstream.url, env: store.env };
  await using one = await startGateway(options);
  await using two = await startGateway(options);
  const gateways: TestGateway[] = [one, two];

  const outcomes: Outcome[] = [];
  async function attempt(gateway: number, id: string): Promise<Outcome> {
    const sentIn = phase;
    let response: Response;
    try {
      response = await gateways[gateway].fetch(PAYMENTS, {
        method: "POST",
        headers: { ...initiationHeaders({ "x-request-id": id, "x-test-phase": sentIn }), ...TPP },
        body: BODY,
        signal: AbortSignal.timeout(8000),
      });
    } catch {
      return {
        id,
        phase: sentIn,
        answered: phase,
        gateway,
        status: 0,
        retryAfter: null,
        replay: false,
        hung: true,
      };
    }
    const body = await response.json();
    return {
      id,
      phase: sentIn,
      answered: phase,
      gateway,
      status: response.status,
      code: body.tppMessages?.[0]?.code,
      retryAfter: response.headers.get("retry-after"),
      replay: response.headers.get("x-idempotent-replay") === "true",
      paymentId: body.paymentId,
    };
  }

  // 150 ids drawn at random by 12 concurrent clients: new ids and repeats, on both instances.
  const ids = Array.from({ length: 150 }, () => crypto.randomUUID());
  let running = true;
  const clients = Array.from({ length: 12 }, async (_, n) => {
    while (running) {
      outcomes.push(await attempt(n % 2, ids[Math.floor(Math.random() * ids.length)]));
      await sleep(10);
    }
  });
  const count = (p: Phase, predicate: (o: Outcome) => boolean = () => true) =>
    outcomes.filter((o) => o.phase === p && predicate(o)).length;

  try {
    assert.ok(await waitFor(() => count("before", (o) => o.status === 201) >= 30, 10_000, 20));
    phase = "killing";
    if (outage === "kill") await redis.kill();
    else redis.freeze(true);
    // Requests the store let through just before have reached the bank by now.
    await sleep(100);
    phase = "outage";
    assert.ok(await waitFor(() => count("outage") >= 40, 10_000, 20), "requests during the outage");
    phase = "restarting";
    if (outage === "kill") await redis.start();
    else redis.freeze(false);
    phase = "after";
    const recovered = await waitFor(
      () => count("after", (o) => o.status === 201 && !o.replay) >= 10,
      10_000,
      20,
    );
    assert.ok(recovered, `new payments after the restart: ${count("after")} answers`);
  } finally {
    running = false;
    await Promise.all(clients);
  }

  // Every id once more, after the load: a replay, a first execution, or 409 when the id is still
  // marked in flight: its answer could not be stored while Redis was down, or its claim was
  // applied in Redis but the reply was lost (killed before answering, or a frozen Redis running
  // commands that had already timed out). Those ids stay blocked for `inflight` (60 s).
  phase = "final";
  for (let i = 0; i < ids.length; i += 15) {
    outcomes.push(
      ...await Promise.all(ids.slice(i, i + 15).map((id, n) => attempt(n % 2, id))),
    );
  }

  // Nothing hung, nothing failed inside the gateway; only the documented answers.
  assert.deepEqual(outcomes.filter((o) => o.hung), [], "no request hung");
  for (const o of outcomes) {
    if (o.status === 201) continue;
    if (o.status === 503) {
      assert.equal(o.code, "STORE_UNAVAILABLE", JSON.stringify(o));
      assert.equal(o.retryAfter, "2");
    } else {
      assert.deepEqual([o.status, o.code], [409, "STATUS_INVALID"], JSON.stringify(o));
    }
  }

  // During the outage: closed, and nothing forwarded. (A request sent during a freeze may be
  // decided once Redis thaws, within its deadline: only those answered before count.)
  const during = outcomes.filter((o) => o.phase === "outage" && o.answered === "outage");
  assert.ok(during.length >= 20, `${during.length} requests sent and answered in the outage`);
  assert.deepEqual([...new Set(during.map((o) => o.code))], ["STORE_UNAVAILABLE"]);
  assert.equal(arrivals.filter((p) => p === "outage").length, 0, "nothing reached the bank");

  // No X-Request-ID executed twice, across the whole run.
  const twice = [...issued].filter(([, paid]) => paid.length > 1);
  assert.deepEqual(twice, [], "X-Request-IDs executed more than once");

  // Every success is the bank's answer for that id: each execution answered once as new, every
  // other success a replay of it.
  const successes = outcomes.filter((o) => o.status === 201);
  for (const o of successes) {
    assert.equal(o.paymentId, issued.get(o.id)?.[0], `answer to ${o.id} is the bank's`);
  }
  assert.equal(successes.filter((o) => !o.replay).length, upstream.received.length);

  // The run did exercise the outage: ids executed before it were replayed after it (the records
  // survived), and most ids are settled in the final round.
  const executedBefore = new Set(
    upstream.received.filter((r) => r.headers.get("x-test-phase") === "before")
      .map((r) => r.headers.get("x-request-id")),
  );
  const replayedAfter = outcomes.filter((o) =>
    (o.phase === "after" || o.phase === "final") && o.replay && executedBefore.has(o.id)
  );
  assert.ok(replayedAfter.length > 0, "an id executed before the outage was replayed after it");
  const final = outcomes.filter((o) => o.phase === "final");
  assert.equal(final.length, ids.length);
  const settled = final.filter((o) => o.status === 201);
  assert.ok(settled.length >= ids.length / 2, `${settled.length} ids settled after the outage`);
}

Deno.test({
  name:
    "faults: Redis killed and restarted under concurrent payments: fail closed holds, no X-Request-ID executed twice",
  ignore: WITHOUT_REDIS,
  fn: () => underLoad("kill"),
});

Deno.test({
  name:
    "faults: Redis frozen and thawed under concurrent payments: fail closed holds, no X-Request-ID executed twice",
  ignore: WITHOUT_REDIS,
  fn: () => underLoad("freeze"),
});

Deno.test({
  // When Redis is down as the bank answers, the answer cannot be stored and the id stays marked
  // in flight; past `inflight` the marker means "outcome unknown" (409), never a free id.
  ignore: WITHOUT_REDIS,
  name:
    "faults: a payment answered while Redis was down is not executed again once its marker expires",
  async fn() {
    await using redis = await startRedisServer({ durable: true });
    await using store = await storeSetup("redis", { url: redis.url, timeoutMs: 250 });
    let release = () => {};
    const answered = new Promise<void>((resolve) => release = resolve);
    let executions = 0;
    await using upstream = startUpstream(async () => {
      executions++;
      await answered;
      return Response.json({ transactionStatus: "RCVD", paymentId: "pay-1" }, { status: 201 });
    });
    const policy = passthroughPolicy(store.policy, {
      defaults: {
        bearer_token: issuer.options,
        idempotency: { mode: "enforce", wait: "200ms", poll: "20ms", inflight: "2s" },
      },
    });
    await using gateway = await startGateway({ policy, upstream: upstream.url, env: store.env });
    const id = crypto.randomUUID();
    const initiate = () =>
      gateway.fetch(PAYMENTS, {
        method: "POST",
        headers: { ...initiationHeaders({ "x-request-id": id }), ...TPP },
        body: BODY,
      });
    const first = initiate();
    await waitFor(() => executions === 1, 5000, 20);
    await redis.kill();
    release();
    assert.equal((await first).status, 201, "the client got the bank's answer");
    await redis.start();
    await sleep(2500); // past `inflight`
    // Retried until the gateway's Redis connection is back (503 STORE_UNAVAILABLE until then).
    let retry = await initiate();
    for (let n = 0; retry.status === 503 && n < 50; n++) {
      await retry.body?.cancel();
      await sleep(100);
      retry = await initiate();
    }
    assert.equal(executions, 1, `the retry (${retry.status}) was not executed again`);
    assert.equal(retry.status, 409);
    assert.equal((await retry.json()).tppMessages[0].code, "STATUS_INVALID");
  },
});

/** What clients do while Redis is down. */
type Traffic = "none" | "1/s" | "bursts";

/** One outage scenario's result: what the first request after Redis answered again got. */
interface Recovery {
  scenario: string;
  /** Status of the first request sent once Redis answered PING again, and its time. */
  first: { status: number; ms: number };
  /** Statuses of the requests of the next seconds, one a second. */
  then: number[];
  /** Statuses during the outage. */
  during: number[];
  /** The gateway's error lines from the restart on. */
  errors: string[];
}

/**
 * Redis stopped for `outageMs` and started again on the same port, with `traffic` in between;
 * then requests as a TPP sends them, each with a new X-Request-ID (idempotency closed: every
 * request needs the store).
 */
async function restartScenario(
  outageMs: number,
  traffic: Traffic,
  durable: boolean,
): Promise<Recovery> {
  await using redis = await startRedisServer({ durable });
  // The default deadline (500 ms): six scenarios share one process on a busy machine.
  await using store = await storeSetup("redis", { url: redis.url });
  await using upstream = startUpstream(() =>
    Response.json({ transactionStatus: "RCVD", paymentId: "pay-1" }, { status: 201 })
  );
  const policy = passthroughPolicy(store.policy, {
    defaults: { idempotency: { mode: "enforce", fail: "closed" } },
  });
  await using gateway = await startGateway({ policy, upstream: upstream.url, env: store.env });
  async function pay(): Promise<number> {
    const response = await gateway.fetch(PAYMENTS, {
      method: "POST",
      headers: initiationHeaders({ "x-request-id": crypto.randomUUID() }),
      body: BODY,
      signal: AbortSignal.timeout(5000),
    });
    await response.body?.cancel();
    return response.status;
  }
  // Before the outage (the first decision loads the script; retried while the machine is busy).
  let before = await pay();
  for (let n = 0; before !== 201 && n < 20; n++) before = await sleep(100).then(pay);
  assert.equal(before, 201, "before the outage");
  await redis.kill();
  const during: number[] = [];
  let down = true;
  const load = (async () => {
    const stopAt = Date.now() + outageMs;
    while (down && Date.now() < stopAt) {
      if (traffic === "1/s") during.push(await pay());
      if (traffic === "bursts") during.push(...await Promise.all(Array.from({ length: 20 }, pay)));
      await sleep(traffic === "bursts" ? 2000 : 1000);
    }
  })();
  await sleep(outageMs);
  down = false;
  await load;
  await redis.start(); // returns once Redis answers PING
  const logged = gateway.log.lines.length;
  const started = performance.now();
  const status = await pay();
  const first = { status, ms: Math.round(performance.now() - started) };
  const then: number[] = [];
  for (let i = 0; i < 3; i++) {
    await sleep(1000);
    then.push(await pay());
  }
  const scenario = `${outageMs / 1000} s, traffic ${traffic}, append-only ${
    durable ? "on" : "off"
  }`;
  const errors = gateway.log.lines.slice(logged).filter((l) => l.level === "error")
    .map((l) => JSON.stringify(l));
  return { scenario, first, then, during, errors };
}

/** Every combination of traffic and persistence for one outage length, side by side. */
async function recoversAfter(outageMs: number) {
  const scenarios = (["none", "1/s", "bursts"] as const).flatMap((traffic) =>
    [true, false].map((durable) => restartScenario(outageMs, traffic, durable))
  );
  const problems: string[] = [];
  for (const { scenario, first, then, during, errors } of await Promise.all(scenarios)) {
    const found: string[] = [];
    if (during.some((s) => s !== 503)) found.push(`${scenario}: during ${during}`);
    if (first.status !== 201 || first.ms >= 1000) {
      found.push(`${scenario}: first request ${first.status} in ${first.ms} ms`);
    }
    if (then.some((s) => s !== 201)) found.push(`${scenario}: then ${then}`);
    problems.push(...found, ...(found.length > 0 ? errors : []));
  }
  assert.deepEqual(problems, [], "every scenario recovers at its first request");
}

for (const seconds of [1, 15, 60]) {
  Deno.test({
    name:
      `faults: Redis stopped for ${seconds} s and started again: the next request succeeds within 1 s (no traffic, 1/s, bursts; append-only on and off)`,
    ignore: WITHOUT_REDIS,
    fn: () => recoversAfter(seconds * 1000),
  });
}
