/**
 * Fault injection with X-Request-ID idempotency on: an answer that never arrived whole is never
 * kept for replay, so a retry with the same X-Request-ID never gets a made-up success. What the
 * retry gets instead (asserted here, as `middleware/idempotency.ts` does it): the id is released
 * and the retry is executed again at the upstream, as a new request.
 */
import assert from "node:assert/strict";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { passthroughPolicy, type PolicyInput } from "../support/policies.ts";
import {
  type Fault,
  type FaultyUpstream,
  paymentCreated,
  startFaultyUpstream,
} from "../support/faulty_upstream.ts";
import { initiationHeaders, singlePayment } from "../support/requests.ts";
import { tokenIssuer } from "../support/tpp_tokens.ts";

// Answers are kept for a replay to an identified TPP only.
const issuer = await tokenIssuer();
const TPP = await issuer.headers("PSDGE-NBG-123456");

const PAYMENTS = "/v1/payments/sepa-credit-transfers";
const TIMEOUT_MS = 300;

function policy(): PolicyInput {
  return passthroughPolicy({
    defaults: {
      proxy: { timeout: `${TIMEOUT_MS}ms`, max_response_bytes: 100_000 },
      bearer_token: issuer.options,
      idempotency: { mode: "enforce", wait: "2s", poll: "20ms" },
    },
  });
}

function initiate(gateway: TestGateway, id: string) {
  return gateway.fetch(PAYMENTS, {
    method: "POST",
    headers: { ...initiationHeaders({ "x-request-id": id }), ...TPP },
    body: JSON.stringify(singlePayment()),
    signal: AbortSignal.timeout(10_000),
  });
}

async function read(response: Response) {
  return {
    status: response.status,
    replay: response.headers.get("x-idempotent-replay"),
    body: await response.json(),
  };
}

/** Runs `fn`, closing the upstream before the gateway (a stalled exchange cannot hang shutdown). */
async function withUpstream(fn: (upstream: FaultyUpstream, gateway: TestGateway) => Promise<void>) {
  const upstream = startFaultyUpstream();
  try {
    const gateway = await startGateway({ policy: policy(), upstream: upstream.url });
    try {
      await fn(upstream, gateway);
    } finally {
      await upstream.close();
      await gateway.close();
    }
  } finally {
    await upstream.close();
  }
}

/** Answers each request with a new payment: pay-1, pay-2, ... */
function newPayments() {
  let n = 0;
  return () => paymentCreated(`pay-${++n}`);
}

Deno.test("faults+idempotency: a complete answer is replayed to a retry without reaching the upstream", async () => {
  await withUpstream(async (upstream, gateway) => {
    upstream.fault = newPayments();
    const id = crypto.randomUUID();
    const first = await read(await initiate(gateway, id));
    const retry = await read(await initiate(gateway, id));
    assert.deepEqual([first.status, first.replay], [201, null]);
    assert.deepEqual([retry.status, retry.replay], [201, "true"]);
    assert.deepEqual(retry.body, first.body);
    assert.equal(upstream.executions(id), 1);
  });
});

/** Faults of a payment initiation, the first answer the client gets, and whether it reached the upstream. */
const FAULTS: { name: string; fault?: Fault; status: number; code?: string; reached: boolean }[] = [
  {
    name: "connection refused",
    status: 503,
    code: "UPSTREAM_UNAVAILABLE",
    reached: false,
  },
  {
    name: "201 head, connection closed inside the body",
    fault: { kind: "reset", stage: "body", status: 201 },
    status: 503,
    code: "UPSTREAM_UNAVAILABLE",
    reached: true,
  },
  {
    name: "201 head, chunked body cut off",
    fault: { kind: "reset", stage: "body", status: 201, framing: "chunked" },
    status: 503,
    code: "UPSTREAM_UNAVAILABLE",
    reached: true,
  },
  {
    name: "no answer before the deadline",
    fault: { kind: "stall" },
    status: 503,
    code: "UPSTREAM_TIMEOUT",
    reached: true,
  },
  {
    name: "201 head, body stalled past the deadline",
    fault: { kind: "stall", after: "headers", status: 201 },
    status: 503,
    code: "UPSTREAM_TIMEOUT",
    reached: true,
  },
  {
    name: "201 with a body over max_response_bytes",
    fault: { kind: "huge", status: 201, bytes: 1_000_000 },
    status: 503,
    code: "UPSTREAM_UNAVAILABLE",
    reached: true,
  },
  {
    name: "the bank's own 500",
    fault: { kind: "answer", status: 500, body: '{"tppMessages":[]}' },
    status: 500,
    reached: true,
  },
];

for (const broken of FAULTS) {
  const unknown = broken.reached && broken.status === 503;
  Deno.test(
    `faults+idempotency: after ${broken.name}, a retry with the same X-Request-ID ${
      unknown
        ? "gets the outcome-unknown answer again, never a second execution"
        : "is executed anew"
    }`,
    async () => {
      await withUpstream(async (upstream, gateway) => {
        const id = crypto.randomUUID();
        if (broken.fault) upstream.fault = broken.fault;
        else upstream.refuse();
        const first = await initiate(gateway, id);
        assert.equal(first.status, broken.status);
        const firstBody = await first.json();
        if (broken.code) {
          assert.equal(firstBody.tppMessages[0].code, broken.code);
          assert.match(
            firstBody.tppMessages[0].text,
            broken.reached ? /outcome is unknown/ : /^The bank could not be reached$/,
          );
        }
        assert.equal(upstream.executions(id), broken.reached ? 1 : 0);
        const released = gateway.log.lines.some((l) =>
          l.msg === "idempotency key released" && l.request_id === id
        );
        assert.equal(released, !unknown, unknown ? "the id is kept" : "the id is released");

        // The bank answers properly now.
        if (!broken.fault) upstream.listen();
        upstream.fault = paymentCreated("pay-retry");
        const retry = await read(await initiate(gateway, id));
        if (unknown) {
          // The write may have run at the bank: the retry gets the first answer, not a new run.
          assert.deepEqual([retry.status, retry.replay], [503, "true"]);
          assert.deepEqual(retry.body, firstBody);
          assert.equal(upstream.executions(id), 1, "never executed twice");
          return;
        }
        assert.equal(retry.status, 201);
        assert.equal(retry.replay, null, "never a replay of the broken first answer");
        assert.equal(retry.body.paymentId, "pay-retry");
        assert.equal(upstream.executions(id), broken.reached ? 2 : 1);

        // The answer that arrived whole is the one kept from now on.
        upstream.fault = paymentCreated("pay-never");
        const third = await read(await initiate(gateway, id));
        assert.deepEqual([third.status, third.replay, third.body.paymentId], [
          201,
          "true",
          "pay-retry",
        ]);
        assert.equal(upstream.executions(id), broken.reached ? 2 : 1);
      });
    },
  );
}

Deno.test("faults+idempotency: a repeat waiting on a write that times out gets its outcome-unknown answer", async () => {
  await withUpstream(async (upstream, gateway) => {
    const id = crypto.randomUUID();
    // The first request stalls at the bank; a second execution would get a proper answer.
    upstream.fault = (request) =>
      request === upstream.requests[0] ? { kind: "stall" } : paymentCreated("pay-2");
    const first = initiate(gateway, id);
    while (upstream.executions(id) === 0) await new Promise((r) => setTimeout(r, 5));
    const repeat = initiate(gateway, id);
    const [a, b] = [await read(await first), await read(await repeat)];
    assert.equal(a.status, 503);
    assert.equal(a.body.tppMessages[0].code, "UPSTREAM_TIMEOUT");
    // The repeat waited while the first was in flight, then got the first answer.
    assert.deepEqual([b.status, b.replay], [503, "true"]);
    assert.deepEqual(b.body, a.body);
    assert.equal(upstream.executions(id), 1);
  });
});

Deno.test({
  // An answer delimited only by the connection's end (no Content-Length, no chunked encoding)
  // looks complete when cut off; the proxy refuses such a JSON answer that does not parse.
  name:
    "faults+idempotency: a 201 cut off by the connection's end (no length, no chunks) is not a success",
  async fn() {
    await withUpstream(async (upstream, gateway) => {
      const id = crypto.randomUUID();
      upstream.fault = { kind: "reset", stage: "body", status: 201, framing: "close" };
      const first = await read(await initiate(gateway, id));
      assert.equal(first.status, 503);
      assert.match(first.body.tppMessages[0].text, /broke the connection; the outcome is unknown/);
      upstream.fault = paymentCreated("pay-retry");
      const retry = await read(await initiate(gateway, id));
      assert.deepEqual(
        [retry.status, retry.replay, retry.body],
        [503, "true", first.body],
        "the cut-off 201 is never replayed as a success, and the write never runs twice",
      );
      assert.equal(upstream.executions(id), 1);
    });
  },
});
