/**
 * Fault injection at the upstream: the real gateway in front of an upstream that refuses, stalls,
 * breaks off, trickles, overflows, fails or sends broken JSON. Each fault must give the documented
 * answer within the proxy's deadline, leave no connection behind, and reach the upstream once per
 * write (never retried).
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
import { consentBody, initiationHeaders, singlePayment } from "../support/requests.ts";
import { DEFAULT_POLICY } from "../support/gateway.ts";
import { tokenIssuer } from "../support/tpp_tokens.ts";
import { parse, stringify } from "yaml";

/** The proxy's deadline in these tests. */
const TIMEOUT_MS = 300;
/** Largest upstream answer the gateway passes on in these tests. */
const MAX_RESPONSE_BYTES = 200_000;
/** How long the faulty upstream's connections may take to end, at the most (a bound, no verdict). */
const SLACK_MS = 2000;

const PAYMENTS = "/v1/payments/sepa-credit-transfers";

function policy(proxy: Record<string, unknown> = {}): PolicyInput {
  return passthroughPolicy({
    defaults: {
      proxy: { timeout: `${TIMEOUT_MS}ms`, max_response_bytes: MAX_RESPONSE_BYTES, ...proxy },
    },
  });
}

/**
 * Runs `fn` against a gateway in front of a faulty upstream, then closes the upstream before the
 * gateway: if the gateway wrongly waits on the upstream, the test fails instead of hanging in the
 * gateway's shutdown.
 */
async function withFault(
  fault: Fault,
  fn: (upstream: FaultyUpstream, gateway: TestGateway) => Promise<void>,
  proxy: Record<string, unknown> = {},
) {
  const upstream = startFaultyUpstream(fault);
  try {
    const gateway = await startGateway({ policy: policy(proxy), upstream: upstream.url });
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

/** A write of each method the interface has, each with a fresh X-Request-ID. */
const WRITES: { name: string; path: string; init(id: string): RequestInit }[] = [
  {
    name: "POST payment initiation",
    path: PAYMENTS,
    init: (id) => ({
      method: "POST",
      headers: initiationHeaders({ "x-request-id": id }),
      body: JSON.stringify(singlePayment()),
    }),
  },
  {
    name: "PUT authorisation update",
    path: `${PAYMENTS}/pay-1/authorisations/auth-1`,
    init: (id) => ({
      method: "PUT",
      headers: initiationHeaders({ "x-request-id": id }),
      body: JSON.stringify({ psuData: { password: "start12" } }),
    }),
  },
  {
    name: "DELETE payment cancellation",
    path: `${PAYMENTS}/pay-1`,
    init: (id) => ({ method: "DELETE", headers: { "x-request-id": id } }),
  },
];

/**
 * Sends a request and reads the whole answer. Which rule ended an exchange (the deadline, a
 * limit, a broken connection) shows in the answer's text, not in how long it took.
 */
async function send(gateway: TestGateway, path: string, init: RequestInit) {
  const response = await gateway.fetch(path, { ...init, signal: AbortSignal.timeout(10_000) });
  const bytes = await response.bytes();
  const text = new TextDecoder().decode(bytes);
  return { status: response.status, headers: response.headers, bytes, text };
}

function tppMessage(text: string) {
  return JSON.parse(text).tppMessages[0];
}

/** The upstream saw exactly these X-Request-IDs, each once, each on a connection of its own. */
function assertOncePerWrite(upstream: FaultyUpstream, ids: string[]) {
  assert.deepEqual(upstream.requests.map((r) => r.headers.get("x-request-id")), ids);
  assert.equal(upstream.connections.length, ids.length, "one connection per write, none retried");
  for (const id of ids) assert.equal(upstream.executions(id), 1, `write ${id} reached it once`);
}

/** Every connection has ended, and the gateway (not the upstream or the test) closed it. */
async function assertClosedByGateway(upstream: FaultyUpstream) {
  const open = await upstream.settled(SLACK_MS);
  assert.deepEqual(open.map((c) => c.id), [], "no connection left open");
  assert.deepEqual(
    upstream.connections.map((c) => c.end),
    upstream.connections.map(() => "peer"),
    "the gateway closed each connection",
  );
}

Deno.test("faults: a refused connection gives 503 UPSTREAM_UNAVAILABLE with Retry-After, writes and reads", async () => {
  await using upstream = startFaultyUpstream();
  upstream.refuse();
  await using gateway = await startGateway({ policy: policy(), upstream: upstream.url });
  for (const write of WRITES) {
    const id = crypto.randomUUID();
    const answer = await send(gateway, write.path, write.init(id));
    assert.equal(answer.status, 503, write.name);
    assert.equal(answer.headers.get("retry-after"), "5");
    assert.equal(answer.headers.get("x-request-id"), id);
    assert.equal(tppMessage(answer.text).code, "UPSTREAM_UNAVAILABLE");
    // Refused at connect: the write never left, so nothing is unknown about it.
    assert.equal(tppMessage(answer.text).text, "The bank could not be reached");
  }
  const read = await send(gateway, `${PAYMENTS}/pay-1/status`, {
    headers: { "x-request-id": crypto.randomUUID() },
  });
  assert.equal(read.status, 503);
  assert.deepEqual(tppMessage(read.text), {
    category: "ERROR",
    code: "UPSTREAM_UNAVAILABLE",
    text: "The bank could not be reached",
  });
  assert.equal(upstream.connections.length, 0);
  // The same gateway reaches the upstream once it listens again: the 503s came from the refusal.
  upstream.listen();
  const again = await send(gateway, PAYMENTS, WRITES[0].init(crypto.randomUUID()));
  assert.equal(again.status, 201);
});

/** Faults after the write reached the upstream, and what the gateway must answer. */
const BROKEN: {
  name: string;
  fault: Fault;
  code: string;
  text: RegExp;
  closedBy: "gateway" | "upstream";
  /** Proxy options over the test policy. */
  proxy?: Record<string, unknown>;
}[] = [
  {
    name: "a stall (no answer at all)",
    fault: { kind: "stall" },
    code: "UPSTREAM_TIMEOUT",
    text: /did not answer in time; the outcome is unknown/,
    closedBy: "gateway",
  },
  {
    name: "a stall after the head (201 and part of the body, then nothing)",
    fault: { kind: "stall", after: "headers" },
    code: "UPSTREAM_TIMEOUT",
    text: /did not answer in time; the outcome is unknown/,
    closedBy: "gateway",
  },
  {
    name: "an answer trickling past the deadline",
    fault: {
      kind: "trickle",
      body: JSON.stringify({ a: "x".repeat(400) }),
      chunkBytes: 4,
      intervalMs: 25,
    },
    code: "UPSTREAM_TIMEOUT",
    text: /did not answer in time; the outcome is unknown/,
    closedBy: "gateway",
  },
  {
    name: "a connection closed inside the head",
    fault: { kind: "reset", stage: "head" },
    code: "UPSTREAM_UNAVAILABLE",
    text: /broke the connection; the outcome is unknown/,
    closedBy: "upstream",
  },
  {
    name: "a connection closed inside a Content-Length body",
    fault: { kind: "reset", stage: "body", framing: "length" },
    code: "UPSTREAM_UNAVAILABLE",
    text: /broke the connection; the outcome is unknown/,
    closedBy: "upstream",
  },
  {
    name: "a connection closed inside a chunked body",
    fault: { kind: "reset", stage: "body", framing: "chunked" },
    code: "UPSTREAM_UNAVAILABLE",
    text: /broke the connection; the outcome is unknown/,
    closedBy: "upstream",
  },
  {
    name: "a body over max_response_bytes (Content-Length)",
    fault: { kind: "huge", bytes: 20 * MAX_RESPONSE_BYTES, framing: "length" },
    code: "UPSTREAM_UNAVAILABLE",
    text: /^The bank's answer was too large to pass on; the outcome is unknown/,
    closedBy: "gateway",
    // A long deadline: the gateway must stop reading and close at the limit, not at the deadline.
    proxy: { timeout: "20s" },
  },
  {
    name: "a body over max_response_bytes (chunked)",
    fault: { kind: "huge", bytes: 20 * MAX_RESPONSE_BYTES, framing: "chunked" },
    code: "UPSTREAM_UNAVAILABLE",
    text: /^The bank's answer was too large to pass on; the outcome is unknown/,
    closedBy: "gateway",
    // A long deadline: the gateway must stop reading and close at the limit, not at the deadline.
    proxy: { timeout: "20s" },
  },
];

for (const broken of BROKEN) {
  Deno.test(`faults: ${broken.name} gives 503 ${broken.code} in time, once per write, no socket left`, async () => {
    await withFault(broken.fault, async (upstream, gateway) => {
      const ids: string[] = [];
      for (const write of WRITES) {
        const id = crypto.randomUUID();
        ids.push(id);
        const answer = await send(gateway, write.path, write.init(id));
        assert.equal(answer.status, 503, write.name);
        assert.equal(answer.headers.get("retry-after"), "5");
        assert.equal(answer.headers.get("x-request-id"), id);
        const message = tppMessage(answer.text);
        assert.equal(message.code, broken.code, write.name);
        assert.match(message.text, broken.text);
      }
      assertOncePerWrite(upstream, ids);
      if (broken.closedBy === "gateway") await assertClosedByGateway(upstream);
      else assert.deepEqual(upstream.connections.map((c) => c.end), ids.map(() => "upstream"));
      const failures = gateway.log.lines.filter((l) => l.msg === "upstream failure");
      assert.equal(failures.length, WRITES.length, "each failure logged once");
    }, broken.proxy);
  });
}

Deno.test("faults: a read is retried once when the connection breaks before the answer, never after", async () => {
  const cases: [Fault, number, string][] = [
    [{ kind: "reset", stage: "head" }, 2, "UPSTREAM_UNAVAILABLE"],
    [{ kind: "reset", stage: "body" }, 1, "UPSTREAM_UNAVAILABLE"],
    [{ kind: "stall" }, 1, "UPSTREAM_TIMEOUT"],
  ];
  for (const [fault, attempts, code] of cases) {
    await withFault(fault, async (upstream, gateway) => {
      const id = crypto.randomUUID();
      const answer = await send(gateway, `${PAYMENTS}/pay-1/status`, {
        headers: { "x-request-id": id },
      });
      assert.equal(answer.status, 503);
      assert.equal(tppMessage(answer.text).code, code);
      assert.equal(upstream.executions(id), attempts, JSON.stringify(fault));
      assert.deepEqual(await upstream.settled(SLACK_MS), []);
    });
  }
});

Deno.test("faults: a slow answer within the deadline is passed on whole, links rewritten", async () => {
  const body = JSON.stringify({
    transactionStatus: "ACSP",
    _links: { self: { href: "/psd2/v1/payments/sepa-credit-transfers/pay-1" } },
  });
  // About 200 ms in many small pieces, under a deadline of 5 s.
  const fault: Fault = { kind: "trickle", status: 200, body, chunkBytes: 16, intervalMs: 30 };
  await withFault(fault, async (_, gateway) => {
    const answer = await send(gateway, `${PAYMENTS}/pay-1/status`, {
      headers: { "x-request-id": crypto.randomUUID() },
    });
    assert.equal(answer.status, 200);
    assert.equal(answer.text, body.replace("/psd2/v1/", "/v1/"));
  }, { timeout: "5s" });
});

Deno.test("faults: an upstream 5xx is the bank's answer, passed on as it is under core_errors: pass and never retried", async () => {
  for (const status of [500, 502, 503, 504]) {
    const body = JSON.stringify({
      tppMessages: [{ category: "ERROR", code: "INTERNAL_SERVER_ERROR", text: `core ${status}` }],
    });
    await using upstream = startFaultyUpstream({
      kind: "answer",
      status,
      body,
      headers: { "retry-after": "30", "x-powered-by": "CoreBanking" },
    });
    await using gateway = await startGateway({
      policy: policy({ core_errors: "pass" }),
      upstream: upstream.url,
    });
    const ids: string[] = [];
    for (const write of WRITES) {
      const id = crypto.randomUUID();
      ids.push(id);
      const answer = await send(gateway, write.path, write.init(id));
      assert.equal(answer.status, status, write.name);
      assert.equal(answer.text, body, "the bank's body, not one of the gateway's");
      assert.equal(answer.headers.get("retry-after"), "30", "the bank's Retry-After");
      assert.equal(answer.headers.get("x-request-id"), id);
      assert.equal(answer.headers.get("server"), null);
      assert.equal(answer.headers.get("x-powered-by"), null);
    }
    // Kept-alive connections are reused, so count requests, not connections.
    assert.deepEqual(upstream.requests.map((r) => r.headers.get("x-request-id")), ids);
    assert.equal(gateway.log.lines.filter((l) => l.msg === "upstream failure").length, 0);
  }
});

/** Broken JSON bodies, and what the client must get for each (undefined: byte for byte). */
const MALFORMED: { name: string; body: string | Uint8Array; expected?: string }[] = [
  {
    name: "truncated JSON with an upstream link",
    body:
      '{"paymentId":"p1","_links":{"self":{"href":"/psd2/v1/payments/sepa-credit-transfers/p1"}',
    expected: '{"paymentId":"p1","_links":{"self":{"href":"/v1/payments/sepa-credit-transfers/p1"}',
  },
  { name: "HTML under a JSON content type", body: "<html><body>Error 17</body></html>" },
  { name: "a bad escape in an href", body: '{"_links":{"self":{"href":"/psd2/v1/\\q"}}}' },
  { name: "an unterminated href string", body: '{"_links":{"self":{"href":"/psd2/v1/p1' },
  { name: "an href that is not a string", body: '{"_links":{"self":{"href":{"x":"/psd2/v1"}}}}' },
  {
    name: "a quoted href inside a string value",
    body: '{"remark":"\\"href\\":\\"/psd2/v1/p1\\"","_links":{}',
  },
  {
    name: "deep nesting around a link",
    body: "[".repeat(20_000) + '{"href":"/psd2/v1/p1"}' + "]".repeat(19_999),
    expected: "[".repeat(20_000) + '{"href":"/v1/p1"}' + "]".repeat(19_999),
  },
  {
    name: "invalid UTF-8",
    body: new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22]),
  },
  { name: "an empty body", body: "" },
];

Deno.test("faults: malformed JSON from the upstream passes through the links rewrite without a 5xx", async () => {
  for (const malformed of MALFORMED) {
    await using upstream = startFaultyUpstream({
      kind: "answer",
      status: 201,
      body: malformed.body,
      headers: { "content-type": "application/json; charset=utf-8" },
    });
    await using gateway = await startGateway({ policy: policy(), upstream: upstream.url });
    const id = crypto.randomUUID();
    const answer = await send(gateway, PAYMENTS, WRITES[0].init(id));
    assert.equal(answer.status, 201, malformed.name);
    const sent = typeof malformed.body === "string"
      ? new TextEncoder().encode(malformed.body)
      : malformed.body;
    const expected = malformed.expected === undefined
      ? sent
      : new TextEncoder().encode(malformed.expected);
    assert.deepEqual(answer.bytes, expected, malformed.name);
    assert.equal(upstream.executions(id), 1);
    assert.equal(gateway.log.lines.filter((l) => l.level === "error").length, 0, malformed.name);
  }
});

Deno.test("faults: the faulty upstream's default answer passes, so each fault above is the cause", async () => {
  await using upstream = startFaultyUpstream(paymentCreated("pay-7"));
  await using gateway = await startGateway({ policy: policy(), upstream: upstream.url });
  for (const write of WRITES) {
    const answer = await send(gateway, write.path, write.init(crypto.randomUUID()));
    assert.equal(answer.status, 201, write.name);
    assert.equal(
      JSON.parse(answer.text)._links.self.href,
      "/v1/payments/sepa-credit-transfers/pay-7",
    );
  }
});

Deno.test("faults: malformed JSON answers under the default policy (consent learning, replay) give no 5xx", async () => {
  const truncated =
    '{"consentStatus":"received","consentId":"c-1","_links":{"self":{"href":"/psd2/v1/consents/c-1"}';
  await using upstream = startFaultyUpstream({ kind: "answer", status: 201, body: truncated });
  // The default policy, with the caller identified by a token: answers are kept for a replay to
  // an identified TPP only.
  const issuer = await tokenIssuer();
  const policy = parse(DEFAULT_POLICY);
  policy.defaults.bearer_token = issuer.options;
  await using gateway = await startGateway({ policy: stringify(policy), upstream: upstream.url });
  const id = crypto.randomUUID();
  const init = {
    method: "POST",
    headers: {
      ...initiationHeaders({ "x-request-id": id }),
      ...await issuer.headers("PSDGE-NBG-123456"),
    },
    body: JSON.stringify(consentBody()),
  };
  const first = await send(gateway, "/v1/consents", init);
  assert.equal(first.status, 201, first.text);
  assert.equal(first.text, truncated.replace("/psd2/v1/", "/v1/"));
  // Idempotency kept the answer as the client got it: the repeat is that answer again.
  const again = await send(gateway, "/v1/consents", init);
  assert.equal(again.status, 201);
  assert.equal(again.headers.get("x-idempotent-replay"), "true");
  assert.equal(again.text, first.text);
  assert.equal(upstream.executions(id), 1);
  assert.equal(gateway.log.lines.filter((l) => l.msg === "unhandled error").length, 0);
});
