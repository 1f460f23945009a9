import assert from "node:assert/strict";
// In-process through the app's fetch (the upstream is still real HTTP); see tests/support/gateway.ts.
import { gatewayApp as startGateway, type TestGateway } from "../support/gateway.ts";
import { startUpstream } from "../support/upstream.ts";
import { startFaultyUpstream } from "../support/faulty_upstream.ts";
import { startRedisServer, storeSetup, WITHOUT_REDIS } from "../support/redis.ts";
import { MemoryStore } from "../../src/store/memory.ts";
import { waitFor } from "../support/wait.ts";
import type { Completion } from "../../src/store/types.ts";
import { tokenIssuer } from "../support/tpp_tokens.ts";
import { buildPolicy, type LevelInput, type PolicyInput } from "../support/policies.ts";

// Answers are kept for a replay to an identified TPP only (see tests/security/ for the others).
const issuer = await tokenIssuer();
const TPP = await issuer.headers("PSDGE-NBG-123456");

const PAYMENT = "/v1/payments/domestic";
const BODY = JSON.stringify({
  debtorAccount: { iban: "GE29NB0000000101904917" },
  instructedAmount: { currency: "GEL", amount: "12.50" },
  creditorAccount: { iban: "GE60NB0000000123456789" },
  creditorName: "Merchant",
});

const BASE: PolicyInput = {
  defaults: { bearer_token: issuer.options, idempotency: { wait: "2s", poll: "20ms" } },
};

function policy(...parts: PolicyInput[]) {
  return buildPolicy(BASE, ...parts);
}

/** The test policy with these idempotency options over its own. */
function idempotency(options: LevelInput["idempotency"], ...parts: PolicyInput[]) {
  return policy({ defaults: { idempotency: options } }, ...parts);
}

function post(id: string, body = BODY, headers: Record<string, string> = {}): RequestInit {
  return {
    method: "POST",
    headers: {
      "x-request-id": id,
      "content-type": "application/json",
      "psu-ip-address": "192.168.8.78",
      ...TPP,
      ...headers,
    },
    body,
  };
}

/** An upstream that creates payments: 201 with a new paymentId each time, after `delayMs`. */
function paymentUpstream(delayMs = 0) {
  let n = 0;
  return startUpstream(async () => {
    const id = `pay-${++n}`;
    if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
    return Response.json(
      {
        transactionStatus: "RCVD",
        paymentId: id,
        _links: { self: { href: `/psd2/v1/payments/domestic/${id}` } },
      },
      {
        status: 201,
        headers: { location: `/psd2/v1/payments/domestic/${id}`, "aspsp-sca-approach": "REDIRECT" },
      },
    );
  });
}

async function json(response: Response) {
  return { status: response.status, body: await response.json(), headers: response.headers };
}

Deno.test("idempotency() replays the first answer to a repeated payment without calling the upstream", async () => {
  await using upstream = paymentUpstream();
  await using gateway = await startGateway({ policy: policy(), upstream: upstream.url });
  const id = crypto.randomUUID();
  const first = await json(await gateway.fetch(PAYMENT, post(id)));
  const second = await json(await gateway.fetch(PAYMENT, post(id)));
  assert.equal(first.status, 201);
  assert.equal(first.headers.get("x-idempotent-replay"), null);
  assert.equal(second.status, 201);
  assert.deepEqual(second.body, first.body);
  assert.equal(
    second.body._links.self.href,
    "/v1/payments/domestic/pay-1",
    "links as the client saw them",
  );
  assert.equal(second.headers.get("x-idempotent-replay"), "true");
  assert.equal(second.headers.get("location"), first.headers.get("location"));
  assert.equal(second.headers.get("aspsp-sca-approach"), "REDIRECT");
  assert.equal(second.headers.get("x-request-id"), id);
  assert.equal(upstream.received.length, 1);
});

Deno.test("idempotency() rejects the same X-Request-ID with another body, path or method", async () => {
  await using upstream = paymentUpstream();
  await using gateway = await startGateway({ policy: policy(), upstream: upstream.url });
  const id = crypto.randomUUID();
  assert.equal((await gateway.fetch(PAYMENT, post(id))).status, 201);
  const other = BODY.replace("12.50", "1250.00");
  for (
    const [path, init] of [[PAYMENT, post(id, other)], ["/v1/payments/foreign", post(id)]] as const
  ) {
    const response = await json(await gateway.fetch(path, init));
    assert.equal(response.status, 400);
    assert.deepEqual(response.body.tppMessages[0], {
      category: "ERROR",
      code: "FORMAT_ERROR",
      path: "X-Request-ID",
      text: `X-Request-ID "${id}" was already used for another request; send a new one`,
    });
  }
  assert.equal(upstream.received.length, 1);
});

Deno.test("idempotency() rejects the same X-Request-ID with another query", async () => {
  // The query is part of the request: a write repeated with another query is another request.
  await using upstream = paymentUpstream();
  await using gateway = await startGateway({
    policy: policy({ defaults: { query_params: { unknown_params: "forward" } } }),
    upstream: upstream.url,
  });
  const id = crypto.randomUUID();
  assert.equal((await json(await gateway.fetch(`${PAYMENT}?batch=1`, post(id)))).status, 201);
  const same = await gateway.fetch(`${PAYMENT}?batch=1`, post(id));
  assert.equal(same.headers.get("x-idempotent-replay"), "true");
  await same.body?.cancel();
  const other = await json(await gateway.fetch(`${PAYMENT}?batch=2`, post(id)));
  assert.equal(other.status, 400);
  assert.equal(
    other.body.tppMessages[0].text,
    `X-Request-ID "${id}" was already used for another request; send a new one`,
  );
  const none = await json(await gateway.fetch(PAYMENT, post(id)));
  assert.equal(none.status, 400, "no query is another query too");
  assert.equal(upstream.received.length, 1);
});

Deno.test("idempotency() takes a percent-encoded path as the path it names", async () => {
  // The path is compared as routed and forwarded (decoded): the bank sees one request.
  await using upstream = paymentUpstream();
  await using gateway = await startGateway({ policy: policy(), upstream: upstream.url });
  const id = crypto.randomUUID();
  await (await gateway.fetch(PAYMENT, post(id))).body?.cancel();
  const encoded = await gateway.fetch("/v1/payments/domesti%63", post(id));
  await encoded.body?.cancel();
  assert.equal(encoded.status, 201);
  assert.equal(encoded.headers.get("x-idempotent-replay"), "true");
  assert.equal(upstream.received.length, 1);
});

Deno.test("idempotency() keeps an upstream 4xx, but releases the id after a 5xx", async () => {
  let status = 400;
  await using upstream = startUpstream(() =>
    Response.json({
      tppMessages: [{ category: "ERROR", code: "FORMAT_ERROR", text: "core says no" }],
    }, { status })
  );
  await using gateway = await startGateway({ policy: policy(), upstream: upstream.url });
  const rejected = crypto.randomUUID();
  assert.equal((await gateway.fetch(PAYMENT, post(rejected))).status, 400);
  const again = await gateway.fetch(PAYMENT, post(rejected));
  assert.equal(again.status, 400);
  assert.equal(again.headers.get("x-idempotent-replay"), "true");
  await again.body?.cancel();
  assert.equal(upstream.received.length, 1);

  status = 500;
  const failed = crypto.randomUUID();
  assert.equal((await gateway.fetch(PAYMENT, post(failed))).status, 500);
  status = 201;
  const retried = await gateway.fetch(PAYMENT, post(failed));
  assert.equal(retried.status, 201);
  assert.equal(retried.headers.get("x-idempotent-replay"), null);
  await retried.body?.cancel();
  assert.equal(upstream.received.length, 3, "the retry after a 5xx reached the upstream");
  assert.ok(gateway.log.lines.some((l) => l.msg === "idempotency key released"));
});

Deno.test("idempotency() does not keep the gateway's own rejections: the client may retry with the id", async () => {
  await using upstream = paymentUpstream();
  await using gateway = await startGateway({
    policy: policy({
      defaults: {
        rate_limit: { limits: { per_psu: { key: ["psu_id"], limit: 1, window: "1h" } } },
      },
    }),
    upstream: upstream.url,
  });
  assert.equal(
    (await gateway.fetch(PAYMENT, post(crypto.randomUUID(), BODY, { "psu-id": "alice" }))).status,
    201,
  );
  const id = crypto.randomUUID();
  const limited = await gateway.fetch(PAYMENT, post(id, BODY, { "psu-id": "alice" }));
  assert.equal(limited.status, 429);
  await limited.body?.cancel();
  const retried = await gateway.fetch(PAYMENT, post(id, BODY, { "psu-id": "bob" }));
  assert.equal(retried.status, 201);
  assert.equal(retried.headers.get("x-idempotent-replay"), null);
  await retried.body?.cancel();
  assert.equal(upstream.received.length, 2);
});

Deno.test("idempotency() makes a repeat wait for the first request in flight", async () => {
  await using upstream = paymentUpstream(300);
  await using gateway = await startGateway({ policy: policy(), upstream: upstream.url });
  const id = crypto.randomUUID();
  const [a, b] = await Promise.all([
    gateway.fetch(PAYMENT, post(id)),
    gateway.fetch(PAYMENT, post(id)),
  ]);
  const [x, y] = [await json(a), await json(b)];
  assert.deepEqual([x.status, y.status], [201, 201]);
  assert.deepEqual(x.body, y.body);
  assert.equal([a, b].filter((r) => r.headers.get("x-idempotent-replay") === "true").length, 1);
  assert.equal(upstream.received.length, 1);
});

Deno.test("idempotency() answers a waiting repeat when the first request is done, not when wait ends", async () => {
  await using upstream = paymentUpstream(300);
  // The default wait (5 s) and poll (50 ms).
  await using gateway = await startGateway({
    policy: buildPolicy({ defaults: { bearer_token: issuer.options } }),
    upstream: upstream.url,
  });
  const id = crypto.randomUUID();
  // Sent together: whichever the store sees second waits for the other.
  const started = performance.now();
  const answers = await Promise.all([
    gateway.fetch(PAYMENT, post(id)),
    gateway.fetch(PAYMENT, post(id)),
  ]);
  const waited = performance.now() - started;
  for (const answer of answers) await answer.body?.cancel();
  assert.deepEqual(answers.map((a) => a.headers.get("x-idempotent-replay")).sort(), [null, "true"]);
  // The store is asked again every `poll` (50 ms): the answer comes about 300 ms after both.
  assert.ok(waited < 3000, `waited ${Math.round(waited)} ms of the 5 s`);
  assert.equal(upstream.received.length, 1);
});

Deno.test("idempotency() stops waiting when wait ends, even between two polls", async () => {
  // wait 2 s, poll 1.5 s: the last look is at 2 s (409), not at 3 s, when the first is done.
  await using upstream = paymentUpstream(2500);
  await using gateway = await startGateway({
    policy: idempotency({ wait: "2s", poll: "1500ms" }),
    upstream: upstream.url,
  });
  const id = crypto.randomUUID();
  // Sent together: whichever the store sees second waits for the other.
  const answers = await Promise.all([
    gateway.fetch(PAYMENT, post(id)).then(json),
    gateway.fetch(PAYMENT, post(id)).then(json),
  ]);
  assert.deepEqual(answers.map((a) => a.status).sort(), [201, 409]);
  assert.equal(answers.find((a) => a.status === 409)?.body.tppMessages[0].code, "STATUS_INVALID");
  assert.equal(upstream.received.length, 1);
});

Deno.test("idempotency() answers 409 STATUS_INVALID when the first request stays in flight past wait", async () => {
  await using upstream = paymentUpstream(800);
  await using gateway = await startGateway({
    policy: idempotency({ wait: "200ms" }),
    upstream: upstream.url,
  });
  const id = crypto.randomUUID();
  const first = gateway.fetch(PAYMENT, post(id));
  // The repeat goes once the first reached the bank (a fixed pause let it claim the id first under
  // load); the bank answers 800 ms later.
  assert.ok(await waitFor(() => upstream.received.length === 1, 5000, 5), "the first reached it");
  const started = performance.now();
  const second = await json(await gateway.fetch(PAYMENT, post(id)));
  assert.ok(performance.now() - started < 700, "waited about 200 ms, not for the upstream");
  assert.equal(second.status, 409);
  assert.equal(second.body.tppMessages[0].code, "STATUS_INVALID");
  assert.equal(
    second.body.tppMessages[0].text,
    `A request with X-Request-ID "${id}" is still being processed; retry it later`,
  );
  assert.equal(second.headers.get("retry-after"), "1");
  assert.equal((await first).status, 201);
  assert.equal(upstream.received.length, 1);
});

Deno.test("idempotency() answers 409 for a repeat whose answer was too large to keep", async () => {
  await using upstream = paymentUpstream();
  await using gateway = await startGateway({
    policy: idempotency({ max_body_bytes: 16 }),
    upstream: upstream.url,
  });
  const id = crypto.randomUUID();
  assert.equal((await gateway.fetch(PAYMENT, post(id))).status, 201);
  const again = await json(await gateway.fetch(PAYMENT, post(id)));
  assert.equal(again.status, 409);
  assert.match(again.body.tppMessages[0].text, /answer is too large to repeat/);
  assert.equal(upstream.received.length, 1);
});

Deno.test("idempotency() requires plain uniqueness on reads only when the policy says so", async () => {
  await using upstream = startUpstream();
  const read = (gateway: TestGateway, id: string) =>
    gateway.fetch("/v1/payments/domestic/p1/status", { headers: { "x-request-id": id } });
  {
    await using gateway = await startGateway({ policy: policy(), upstream: upstream.url });
    const id = crypto.randomUUID();
    assert.equal((await read(gateway, id)).status, 200);
    assert.equal((await read(gateway, id)).status, 200, "reads are not checked by default");
  }
  await using gateway = await startGateway({
    policy: idempotency({ reads: "unique" }),
    upstream: upstream.url,
  });
  const id = crypto.randomUUID();
  const first = await read(gateway, id);
  assert.equal(first.status, 200);
  await first.body?.cancel();
  // A used id is all the store keeps for a read: nothing to complete after the answer.
  assert.equal(gateway.store.stats.roundTrips, 1, "one round trip");
  const second = await json(await read(gateway, id));
  assert.equal(second.status, 400);
  assert.deepEqual(second.body.tppMessages[0], {
    category: "ERROR",
    code: "FORMAT_ERROR",
    path: "X-Request-ID",
    text: `X-Request-ID "${id}" was already used; every request needs a new one`,
  });
  assert.equal(upstream.received.length, 3);
});

Deno.test("idempotency() takes writes: replay, unique (any reuse refused, never replayed) and none (nothing checked)", async () => {
  await using upstream = paymentUpstream();
  {
    // replay, the default, said explicitly.
    await using gateway = await startGateway({
      policy: idempotency({ writes: "replay", reads: "none" }),
      upstream: upstream.url,
    });
    const id = crypto.randomUUID();
    await (await gateway.fetch(PAYMENT, post(id))).body?.cancel();
    const same = await gateway.fetch(PAYMENT, post(id));
    await same.body?.cancel();
    assert.equal(same.headers.get("x-idempotent-replay"), "true");
    assert.equal(upstream.received.length, 1);
  }
  {
    await using gateway = await startGateway({
      policy: idempotency({ writes: "unique" }),
      upstream: upstream.url,
    });
    const id = crypto.randomUUID();
    assert.equal((await json(await gateway.fetch(PAYMENT, post(id)))).status, 201);
    const same = await json(await gateway.fetch(PAYMENT, post(id)));
    assert.equal(same.status, 400, "the same request is refused too, never replayed");
    assert.equal(same.headers.get("x-idempotent-replay"), null);
    assert.equal(
      same.body.tppMessages[0].text,
      `X-Request-ID "${id}" was already used; every request needs a new one`,
    );
    assert.equal(upstream.received.length, 2);
  }
  await using gateway = await startGateway({
    policy: idempotency({ writes: "none" }),
    upstream: upstream.url,
  });
  const id = crypto.randomUUID();
  for (const n of [1, 2]) {
    const response = await json(await gateway.fetch(PAYMENT, post(id)));
    assert.equal(response.status, 201, `request ${n}`);
    assert.equal(response.headers.get("x-idempotent-replay"), null);
  }
  assert.equal(upstream.received.length, 4);
});

Deno.test("idempotency() in report mode forwards a reused id and records the finding", async () => {
  await using upstream = paymentUpstream();
  await using gateway = await startGateway({
    policy: idempotency({ mode: "report" }),
    upstream: upstream.url,
  });
  const id = crypto.randomUUID();
  await (await gateway.fetch(PAYMENT, post(id))).body?.cancel();
  const other = await gateway.fetch(PAYMENT, post(id, BODY.replace("12.50", "13.00")));
  assert.equal(other.status, 201);
  await other.body?.cancel();
  assert.equal(upstream.received.length, 2);
  assert.deepEqual(findings(gateway), [{
    check: "idempotency",
    mode: "report",
    code: "FORMAT_ERROR",
  }]);
});

for (const kind of ["memory", "redis", "upstash"] as const) {
  Deno.test({
    name:
      `idempotency() sends 200 concurrent retries of one payment to the upstream once (${kind})`,
    ignore: kind !== "memory" && WITHOUT_REDIS,
    async fn() {
      await using store = await storeSetup(kind, { timeoutMs: 2000 });
      await using upstream = paymentUpstream(200);
      // Two gateway instances on one store (in-process instances share one memory store).
      const shared = kind === "memory" ? { store: new MemoryStore() } : undefined;
      const policy = idempotency({ wait: "10s" }, store.policy);
      const options = { policy, upstream: upstream.url, env: store.env, services: shared };
      await using one = await startGateway(options);
      await using two = await startGateway(options);
      const id = crypto.randomUUID();
      const responses = await Promise.all(
        Array.from({ length: 200 }, (_, i) => (i % 2 ? one : two).fetch(PAYMENT, post(id))),
      );
      const answers = await Promise.all(responses.map(json));
      assert.equal(upstream.received.length, 1);
      assert.deepEqual(new Set(answers.map((a) => a.status)), new Set([201]));
      assert.deepEqual(new Set(answers.map((a) => a.body.paymentId)), new Set(["pay-1"]));
      assert.equal(
        responses.filter((r) => r.headers.get("x-idempotent-replay") === "true").length,
        199,
      );
    },
  });
}

for (const fail of ["closed", "open"] as const) {
  Deno.test({
    name: `idempotency() with fail: ${fail} while Redis is down, and recovery after its restart${
      fail === "closed" ? " (closed: the default)" : ""
    }`,
    ignore: WITHOUT_REDIS,
    async fn() {
      await using redis = await startRedisServer();
      await using store = await storeSetup("redis", { url: redis.url, timeoutMs: 300 });
      await using upstream = paymentUpstream();
      await using gateway = await startGateway({
        // fail: closed is the default: no payment goes through unchecked.
        policy: idempotency(fail === "closed" ? {} : { fail }, store.policy),
        upstream: upstream.url,
        env: store.env,
      });
      const id = crypto.randomUUID();
      assert.equal((await gateway.fetch(PAYMENT, post(id))).status, 201);
      await redis.kill();
      const down = await json(await gateway.fetch(PAYMENT, post(crypto.randomUUID())));
      if (fail === "closed") {
        assert.equal(down.status, 503);
        assert.equal(down.body.tppMessages[0].code, "STORE_UNAVAILABLE");
        assert.equal(down.headers.get("retry-after"), "2");
        assert.equal(upstream.received.length, 1, "not forwarded");
      } else {
        assert.equal(down.status, 201);
        assert.equal(upstream.received.length, 2);
        assert.equal(gateway.store.stats.failOpen, 1);
        assert.ok(
          gateway.log.lines.some((l) => l.msg === "store unavailable, request let through"),
        );
      }
      await redis.start();
      // Recovered when a payment is claimed and its repeat replayed, without a gateway restart.
      const end = Date.now() + 10_000;
      let replayed = false;
      while (!replayed && Date.now() < end) {
        const fresh = crypto.randomUUID();
        await (await gateway.fetch(PAYMENT, post(fresh))).body?.cancel();
        const repeat = await gateway.fetch(PAYMENT, post(fresh));
        replayed = repeat.headers.get("x-idempotent-replay") === "true";
        await repeat.body?.cancel();
        if (!replayed) await new Promise((r) => setTimeout(r, 100));
      }
      assert.ok(
        replayed,
        `recovered without a restart (stats ${JSON.stringify(gateway.store.stats)}, last log ${
          JSON.stringify(gateway.log.lines.filter((l) => l.level === "error").slice(-3))
        })`,
      );
    },
  });
}

/** The findings of the last request that had any: check, mode and code. */
function findings(gateway: TestGateway) {
  const line = gateway.log.lines.findLast((l) => l.findings);
  return (line?.findings as { check: string; mode: string; code: string }[] | undefined)
    ?.map(({ check, mode, code }) => ({ check, mode, code }));
}

Deno.test("idempotency() keeps the outcome-unknown answer of a write that timed out: a retry never executes it again", async () => {
  await using upstream = paymentUpstream(1500);
  await using gateway = await startGateway({
    policy: policy({ defaults: { proxy: { timeout: "300ms" } } }),
    upstream: upstream.url,
  });
  const id = crypto.randomUUID();
  const first = await json(await gateway.fetch(PAYMENT, post(id)));
  assert.equal(first.status, 503);
  assert.equal(first.body.tppMessages[0].code, "UPSTREAM_TIMEOUT");
  assert.match(first.body.tppMessages[0].text, /outcome is unknown/);
  const retry = await json(await gateway.fetch(PAYMENT, post(id)));
  assert.equal(retry.status, 503, "the retry gets the first answer, not a new execution");
  assert.equal(retry.headers.get("x-idempotent-replay"), "true");
  assert.deepEqual(retry.body, first.body);
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(upstream.received.length, 1, "the bank saw the payment once");
});

Deno.test("idempotency() frees the X-Request-ID of a write that never reached the bank", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  await using gateway = await startGateway({
    policy: policy(),
    upstream: `http://127.0.0.1:${port}`,
  });
  const id = crypto.randomUUID();
  const refused = await json(await gateway.fetch(PAYMENT, post(id)));
  assert.equal(refused.status, 503);
  assert.equal(refused.body.tppMessages[0].text, "The bank could not be reached");
  const again = await json(await gateway.fetch(PAYMENT, post(id)));
  assert.equal(again.headers.get("x-idempotent-replay"), null, "nothing was kept for the id");
  assert.equal(again.status, 503);
});

Deno.test("idempotency() replays the first answer without the headers of that one exchange", async () => {
  await using upstream = startUpstream(() =>
    new Response(JSON.stringify({ paymentId: "p-1", transactionStatus: "RCVD" }), {
      status: 201,
      headers: {
        "content-type": "application/json",
        "set-cookie": "session=first",
        "retry-after": "7",
        "ratelimit-limit": "99",
        "ratelimit-remaining": "98",
        "ratelimit-reset": "60",
        "aspsp-sca-approach": "REDIRECT",
      },
    })
  );
  await using gateway = await startGateway({ policy: policy(), upstream: upstream.url });
  const id = crypto.randomUUID();
  const first = await gateway.fetch(PAYMENT, post(id));
  await first.body?.cancel();
  // A second later, so that a stored Date would show.
  await new Promise((r) => setTimeout(r, 1100));
  const replay = await gateway.fetch(PAYMENT, post(id));
  assert.equal(replay.headers.get("x-idempotent-replay"), "true");
  assert.deepEqual(await replay.json(), { paymentId: "p-1", transactionStatus: "RCVD" });
  assert.equal(replay.headers.get("aspsp-sca-approach"), "REDIRECT");
  for (const name of ["set-cookie", "retry-after", "ratelimit-limit", "ratelimit-remaining"]) {
    assert.equal(replay.headers.get(name), null, `${name} belongs to the first exchange`);
  }
  assert.equal(replay.headers.get("ratelimit-reset"), null);
  assert.notEqual(replay.headers.get("date"), first.headers.get("date"), "a Date of its own");
  assert.equal(upstream.received.length, 1);
});

/** A memory store that also records each completion the gateway asks of it. */
class RecordingStore extends MemoryStore {
  readonly completions: Completion[] = [];
  override complete(completion: Completion): Promise<void> {
    this.completions.push(completion);
    return super.complete(completion);
  }
}

Deno.test("idempotency() keeps the answer's headers as the response lists them, without those of one exchange", async () => {
  // Every header of one exchange reaches the answer here: the upstream's (passed by
  // answer_headers, its X-Request-ID echoed in another case) and the rate limit's. The core's
  // repeated Link and Set-Cookie lines arrive as separate pairs (the gateway's HTTP/1 client).
  await using upstream = startFaultyUpstream();
  upstream.fault = (request) => ({
    kind: "answer",
    status: 201,
    headers: {
      "content-type": "application/json",
      "X-Zeta": "z",
      "Link": "<a>",
      "ASPSP-SCA-Approach": "REDIRECT",
      "X-Request-ID": request.headers.get("x-request-id")!.toUpperCase(),
      "Date": "Mon, 01 Jan 2024 00:00:00 GMT",
      "link": "<b>",
      "Retry-After": "3",
      "X-Idempotent-Replay": "false",
      "Set-Cookie": "a=b",
      "set-cookie": "c=d",
    },
    body: JSON.stringify({ paymentId: "p-1" }),
  });
  const store = new RecordingStore();
  await using gateway = await startGateway({
    policy: policy({
      defaults: {
        proxy: { answer_headers: ["date", "set-cookie", "x-idempotent-replay", "link", "x-zeta"] },
        rate_limit: { limits: { per_tpp: { key: ["tpp"], limit: 10, window: "1h" } } },
      },
    }),
    upstream: upstream.url,
    services: { store },
  });
  const id = crypto.randomUUID();
  const first = await gateway.fetch(PAYMENT, post(id));
  await first.body?.cancel();
  for (const name of ["set-cookie", "retry-after", "ratelimit-limit", "ratelimit-remaining"]) {
    assert.ok(first.headers.has(name), `the first answer has ${name}`);
  }
  assert.ok(first.headers.has("ratelimit-reset"));
  assert.equal(first.headers.get("date"), "Mon, 01 Jan 2024 00:00:00 GMT");
  assert.deepEqual(store.completions.map((c) => [c.action, c.response?.headers]), [[
    "done",
    [
      ["aspsp-sca-approach", "REDIRECT"],
      ["cache-control", "no-store"],
      ["content-type", "application/json"],
      ["link", "<a>, <b>"],
      ["x-zeta", "z"],
    ],
  ]]);
  const replay = await gateway.fetch(PAYMENT, post(id));
  await replay.body?.cancel();
  assert.equal(replay.headers.get("x-idempotent-replay"), "true");
  assert.equal(replay.headers.get("x-request-id"), id);
  assert.equal(replay.headers.get("link"), "<a>, <b>");
  assert.equal(replay.headers.get("x-zeta"), "z");
  assert.equal(upstream.requests.length, 1);
});

Deno.test("idempotency() releases the id after the bank's 408, 425 and 429: a retry is executed", async () => {
  for (const status of [408, 425, 429]) {
    let answer = status;
    await using upstream = startUpstream(() =>
      Response.json({ note: "try later" }, { status: answer })
    );
    await using gateway = await startGateway({ policy: policy(), upstream: upstream.url });
    const id = crypto.randomUUID();
    assert.equal((await json(await gateway.fetch(PAYMENT, post(id)))).status, status);
    answer = 201;
    const retry = await gateway.fetch(PAYMENT, post(id));
    await retry.body?.cancel();
    assert.equal(retry.status, 201, `after ${status}`);
    assert.equal(retry.headers.get("x-idempotent-replay"), null);
    assert.equal(upstream.received.length, 2, `after ${status}`);
  }
});

Deno.test("idempotency() replays an answer without a body (204, 205, an empty 202) as one", async () => {
  for (const status of [204, 205, 202]) {
    // A 205 says "no content" by Content-Length: 0 (RFC 9110, 15.3.6).
    await using upstream = startFaultyUpstream();
    upstream.fault = { kind: "answer", status, body: "", framing: "length" };
    await using gateway = await startGateway({ policy: policy(), upstream: upstream.url });
    const id = crypto.randomUUID();
    const cancel = () =>
      gateway.fetch("/v1/payments/domestic/p-1", {
        method: "DELETE",
        headers: { "x-request-id": id, ...TPP },
      });
    const first = await cancel();
    assert.equal(first.status, status);
    await first.body?.cancel();
    const again = await cancel();
    assert.equal(again.status, status);
    assert.equal(again.headers.get("x-idempotent-replay"), "true", `${status}`);
    assert.equal(await again.text(), "");
    assert.equal(upstream.requests.length, 1);
  }
});

Deno.test("idempotency() refuses inconsistent times: poll over wait, inflight under wait, retention under inflight", async () => {
  await using upstream = startUpstream();
  for (
    const [options, problem] of [
      [{ wait: "1s", poll: "2s" }, "poll must not be longer than wait"],
      [{ inflight: "1s" }, "inflight must not be shorter than wait"],
      [{ retention: "30s" }, "retention must not be shorter than inflight"],
    ] as const
  ) {
    await assert.rejects(
      startGateway({
        policy: buildPolicy({ defaults: { bearer_token: issuer.options, idempotency: options } }),
        upstream: upstream.url,
      }),
      new RegExp(problem),
      JSON.stringify(options),
    );
  }
  // Equal is fine.
  await using gateway = await startGateway({
    policy: idempotency({ inflight: "2s", retention: "2s", poll: "2s" }),
    upstream: upstream.url,
  });
  assert.ok(gateway.url);
});

Deno.test("idempotency() consumes no rate limit for a reused X-Request-ID it refuses", async () => {
  await using upstream = paymentUpstream();
  await using gateway = await startGateway({
    policy: policy({
      defaults: { rate_limit: { limits: { per_tpp: { key: ["tpp"], limit: 2, window: "1h" } } } },
    }),
    upstream: upstream.url,
  });
  const id = crypto.randomUUID();
  assert.equal((await json(await gateway.fetch(PAYMENT, post(id)))).status, 201);
  const reused = await json(await gateway.fetch(PAYMENT, post(id, BODY.replace("12.50", "13.00"))));
  assert.equal(reused.status, 400);
  assert.equal(reused.body.tppMessages[0].path, "X-Request-ID");
  const next = await json(await gateway.fetch(PAYMENT, post(crypto.randomUUID())));
  assert.equal(next.status, 201, "the refused request used none of the limit");
});

Deno.test("idempotency() never replays requests without an X-Request-ID (request_id off)", async () => {
  await using upstream = paymentUpstream();
  await using gateway = await startGateway({
    policy: policy({ defaults: { request_id: { mode: "off" } } }),
    upstream: upstream.url,
  });
  const { "x-request-id": _, ...headers } = post("").headers as Record<string, string>;
  for (const n of [1, 2]) {
    const response = await gateway.fetch(PAYMENT, { method: "POST", headers, body: BODY });
    assert.equal(response.status, 201);
    assert.equal(response.headers.get("x-idempotent-replay"), null, `request ${n}`);
    await response.body?.cancel();
  }
  assert.equal(upstream.received.length, 2);
});

Deno.test("idempotency() answers 409 with the X-Request-ID path for an id still in flight or gone", async () => {
  await using slow = paymentUpstream(600);
  await using gateway = await startGateway({
    policy: idempotency({ wait: "100ms" }),
    upstream: slow.url,
  });
  const id = crypto.randomUUID();
  const first = gateway.fetch(PAYMENT, post(id));
  await new Promise((r) => setTimeout(r, 50));
  const inflight = await json(await gateway.fetch(PAYMENT, post(id)));
  assert.deepEqual([inflight.status, inflight.body.tppMessages[0].code], [409, "STATUS_INVALID"]);
  assert.equal(inflight.body.tppMessages[0].path, "X-Request-ID");
  await (await first).body?.cancel();

  await using small = await startGateway({
    policy: idempotency({ max_body_bytes: 16 }),
    upstream: slow.url,
  });
  const big = crypto.randomUUID();
  await (await small.fetch(PAYMENT, post(big))).body?.cancel();
  const gone = await json(await small.fetch(PAYMENT, post(big)));
  assert.deepEqual(gone.body.tppMessages[0], {
    category: "ERROR",
    code: "STATUS_INVALID",
    path: "X-Request-ID",
    text:
      `The request with X-Request-ID "${big}" was processed but its answer is too large to repeat; read the resource instead`,
  });
});

Deno.test("idempotency() keeps an answer of exactly max_body_bytes", async () => {
  const body = JSON.stringify({ paymentId: "p-1" });
  await using upstream = startUpstream(() =>
    new Response(body, { status: 201, headers: { "content-type": "application/json" } })
  );
  await using gateway = await startGateway({
    policy: idempotency({ max_body_bytes: new TextEncoder().encode(body).byteLength }),
    upstream: upstream.url,
  });
  const id = crypto.randomUUID();
  await (await gateway.fetch(PAYMENT, post(id))).body?.cancel();
  const again = await gateway.fetch(PAYMENT, post(id));
  assert.equal(again.headers.get("x-idempotent-replay"), "true");
  assert.equal(await again.text(), body);
});

Deno.test("idempotency() answers 409 'not seen to finish' once a request outlived its in-flight time", async () => {
  await using upstream = paymentUpstream(1500);
  await using gateway = await startGateway({
    policy: idempotency({ inflight: "1s", wait: "200ms" }),
    upstream: upstream.url,
  });
  const id = crypto.randomUUID();
  const first = gateway.fetch(PAYMENT, post(id));
  await new Promise((r) => setTimeout(r, 1150));
  const repeat = await json(await gateway.fetch(PAYMENT, post(id)));
  assert.deepEqual(repeat.body.tppMessages[0], {
    category: "ERROR",
    code: "STATUS_INVALID",
    path: "X-Request-ID",
    text:
      `The request with X-Request-ID "${id}" was not seen to finish; it may have been executed. Read the resource's status, and send a new X-Request-ID if it has to be repeated`,
  });
  assert.equal(repeat.status, 409);
  assert.equal((await first).status, 201);
  assert.equal(upstream.received.length, 1);
});

Deno.test("idempotency() logs the release of an id with the request and the bank's status", async () => {
  await using upstream = startUpstream(() => Response.json({}, { status: 503 }));
  await using gateway = await startGateway({ policy: policy(), upstream: upstream.url });
  const id = crypto.randomUUID();
  await (await gateway.fetch(PAYMENT, post(id))).body?.cancel();
  const line = gateway.log.lines.find((l) => l.msg === "idempotency key released");
  assert.deepEqual(
    [line?.op, line?.request_id, line?.status, line?.upstream_status],
    ["initiatePayment", id, 503, 503],
  );
});

Deno.test("idempotency() replays a write with a query through another gateway instance", async () => {
  await using upstream = paymentUpstream();
  const options = {
    policy: policy({ defaults: { query_params: { unknown_params: "forward" } } }),
    upstream: upstream.url,
    services: { store: new MemoryStore() },
  };
  await using one = await startGateway(options);
  await using two = await startGateway(options);
  const id = crypto.randomUUID();
  await (await one.fetch(`${PAYMENT}?batch=1`, post(id))).body?.cancel();
  const again = await two.fetch(`${PAYMENT}?batch=1`, post(id));
  await again.body?.cancel();
  assert.equal(again.headers.get("x-idempotent-replay"), "true");
  assert.equal(upstream.received.length, 1);
});

Deno.test("idempotency() replays a write with a query whatever host name it came in under", async () => {
  // Instances behind a balancer see one request under different names: the fingerprint is
  // method, path, query and body, not the host.
  await using upstream = paymentUpstream();
  await using gateway = await startGateway({
    policy: policy({ defaults: { query_params: { unknown_params: "forward" } } }),
    upstream: upstream.url,
  });
  const id = crypto.randomUUID();
  const first = await gateway.fetch(`http://api.bank.example${PAYMENT}?batch=1`, post(id));
  assert.equal(first.status, 201);
  await first.body?.cancel();
  const again = await gateway.fetch(`http://gw-2.internal:8443${PAYMENT}?batch=1`, post(id));
  await again.body?.cancel();
  assert.equal(again.headers.get("x-idempotent-replay"), "true");
  assert.equal(upstream.received.length, 1);
});

Deno.test("idempotency() in report mode lets a reused id count against the rate limits", async () => {
  // The request goes to the bank: report mode records the reuse, it does not stop the decision.
  await using upstream = paymentUpstream();
  await using gateway = await startGateway({
    policy: idempotency({ mode: "report" }, {
      defaults: { rate_limit: { limits: { per_tpp: { key: ["tpp"], limit: 2, window: "1h" } } } },
    }),
    upstream: upstream.url,
  });
  const id = crypto.randomUUID();
  assert.equal((await json(await gateway.fetch(PAYMENT, post(id)))).status, 201);
  const reused = await json(await gateway.fetch(PAYMENT, post(id, BODY.replace("12.50", "13"))));
  assert.equal(reused.status, 201);
  assert.equal(reused.headers.get("ratelimit-remaining"), "0");
  const third = await json(await gateway.fetch(PAYMENT, post(crypto.randomUUID())));
  assert.equal(third.status, 429, "the reused request used the second of the two");
  assert.equal(upstream.received.length, 2);
});

Deno.test({
  name:
    "idempotency() answers the client when the store fails after the bank answered, and logs it",
  ignore: WITHOUT_REDIS,
  async fn() {
    await using redis = await startRedisServer();
    await using store = await storeSetup("redis", { url: redis.url, timeoutMs: 300 });
    // The bank answers after Redis died: the answer cannot be kept.
    await using upstream = startUpstream(async () => {
      await redis.kill();
      return Response.json({ paymentId: "p-1" }, { status: 201 });
    });
    await using gateway = await startGateway({
      policy: policy(store.policy),
      upstream: upstream.url,
      env: store.env,
    });
    const id = crypto.randomUUID();
    const response = await json(await gateway.fetch(PAYMENT, post(id)));
    assert.equal(response.status, 201);
    assert.equal(response.body.paymentId, "p-1");
    const line = gateway.log.lines.find((l) => l.msg === "idempotency record not updated");
    assert.deepEqual([line?.op, line?.request_id, line?.action], ["initiatePayment", id, "done"]);
    assert.equal(typeof line?.error, "string");
  },
});

Deno.test("idempotency() spends one store round trip on a write it keeps nothing of, two on one it keeps", async () => {
  await using upstream = paymentUpstream();
  // basket_scope learns the payment's owner in a third round trip of its own.
  const own = policy({ defaults: { basket_scope: { mode: "off" } } });
  await using gateway = await startGateway({ policy: own, upstream: upstream.url });
  const { stats } = gateway.store;
  const trips = async (init: RequestInit) => {
    const before = stats.roundTrips;
    assert.equal((await gateway.fetch(PAYMENT, init)).status, 201);
    return stats.roundTrips - before;
  };
  // Without TPP identity an id is only ever refused on reuse: there is no answer to complete.
  const anonymous = post(crypto.randomUUID());
  for (const name of Object.keys(TPP)) delete (anonymous.headers as Record<string, string>)[name];
  assert.equal(await trips(anonymous), 1, "the claim only");
  assert.equal(await trips(post(crypto.randomUUID())), 2, "the claim, then the kept answer");
});
