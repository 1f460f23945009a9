/**
 * Issue 18.1: one byte from the core killed the gateway. An answer header holding a byte RFC 9110
 * does not allow made Deno panic in its HTTP writer, and with idempotency the answer was stored,
 * so the retry crashed the restarted instance too. Every such answer is now a Berlin Group 503,
 * the gateway's own (never the core's answer) is what idempotency keeps, the connection is closed,
 * and both upstream clients behave the same.
 */
import assert from "node:assert/strict";
import { rawAnswer, startFaultyUpstream } from "../support/faulty_upstream.ts";
import { startGateway } from "../support/gateway.ts";
import { buildPolicy } from "../support/policies.ts";
import { startMain } from "../support/main_process.ts";
import { closedPort } from "../support/upstream.ts";
import { initiationHeaders, singlePayment } from "../support/requests.ts";

/** The characters of a token (RFC 9110 5.6.2): what a header name is made of. */
const TCHAR = /^[!#$%&'*+.^_`|~0-9A-Za-z-]$/;

/** Whether RFC 9110 allows the byte inside a field value (field-vchar, obs-text, SP, HTAB). */
function valueByte(byte: number): boolean {
  return byte === 0x09 || (byte >= 0x20 && byte !== 0x7f);
}

const hex = (byte: number) => `0x${byte.toString(16).padStart(2, "0")}`;

Deno.test("upstream answer with a control byte in a header: 503, the process lives, the retry is not executed", async () => {
  await using core = startFaultyUpstream({
    kind: "raw",
    parts: [{ bytes: rawAnswer(201, ["content-type: application/json", "x-core: a\x01b"], "{}") }],
  });
  const port = closedPort();
  const { child } = await startMain([], {
    env: { UPSTREAM_URL: core.url, PORT: String(port), GATEWAY_WATCH: "false" },
  });
  try {
    const url = `http://127.0.0.1:${port}`;
    const id = crypto.randomUUID();
    const pay = () =>
      fetch(`${url}/v1/payments/sepa-credit-transfers`, {
        method: "POST",
        headers: initiationHeaders({ "x-request-id": id }),
        body: JSON.stringify(singlePayment()),
      });
    const first = await pay();
    assert.equal(first.status, 503);
    const body = await first.json();
    assert.equal(body.tppMessages[0].code, "UPSTREAM_UNAVAILABLE");
    assert.match(body.tppMessages[0].text, /outcome is unknown/);
    assert.equal(first.headers.get("x-core"), null);
    assert.equal(await core.connections[0].ended, "peer", "the gateway closed the connection");

    // The retry never gets the core's answer and is not executed again: this caller has no TPP
    // identity under the default policy, so a reused X-Request-ID is refused (an identified TPP
    // gets the stored 503: tests/faults/idempotency_faults_test.ts).
    const retry = await pay();
    assert.equal(retry.status, 400);
    assert.equal(retry.headers.get("x-core"), null);
    assert.equal((await retry.json()).tppMessages[0].path, "X-Request-ID");
    assert.equal(core.executions(id), 1);

    // Still serving.
    core.fault = { kind: "answer", status: 200, body: "{}" };
    const read = await fetch(`${url}/v1/consents/c-1/status`, {
      headers: { "x-request-id": crypto.randomUUID() },
    });
    await read.body?.cancel();
    assert.equal(read.status, 200);
  } finally {
    child.kill("SIGTERM");
    // Alive until stopped: SIGTERM shuts it down gracefully, with exit code 0.
    assert.equal((await child.status).code, 0);
    await child.stdout.cancel();
    await child.stderr.cancel().catch(() => {});
  }
});

/**
 * The outcome class of one faulty answer through a gateway: passed on (the core's status), refused
 * (503 UPSTREAM_UNAVAILABLE), or anything else (named by its status).
 */
async function outcome(gateway: { fetch(path: string, init?: RequestInit): Promise<Response> }) {
  const response = await gateway.fetch("/v1/consents/c-1/status", {
    headers: { "x-request-id": crypto.randomUUID() },
  });
  const text = await response.text();
  if (response.status < 500) return "passed";
  if (response.status === 503 && JSON.parse(text).tppMessages[0].code === "UPSTREAM_UNAVAILABLE") {
    return "refused";
  }
  return `status ${response.status}`;
}

/** Whether the connection ends within a second. */
async function ends(connection: { ended: Promise<unknown> }): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((resolve) => timer = setTimeout(() => resolve(false), 1000));
  const ended = await Promise.race([connection.ended.then(() => true), late]);
  clearTimeout(timer);
  return ended;
}

/** A policy in front of `core` with the given upstream client and no other checks in the way. */
function policy(client: "http1" | "fetch") {
  return buildPolicy({ upstream: { url: "${UPSTREAM_URL}", client } });
}

/**
 * The faulty-core corpus: every byte in a header name and in a header value, and answer heads
 * that are malformed in other ways, each with the outcome RFC 9110 and 9112 call for.
 */
function corpus(): { name: string; answer: string; expect: "passed" | "refused" }[] {
  const cases: { name: string; answer: string; expect: "passed" | "refused" }[] = [];
  for (let byte = 0; byte < 256; byte++) {
    const char = String.fromCharCode(byte);
    cases.push({
      name: `name byte ${hex(byte)}`,
      answer: rawAnswer(200, ["content-type: application/json", `x-te${char}st: v`], "{}"),
      // A colon ends the name early: "x-te" with the value "st: v" is well-formed.
      expect: TCHAR.test(char) || char === ":" ? "passed" : "refused",
    });
    cases.push({
      name: `value byte ${hex(byte)}`,
      answer: rawAnswer(200, ["content-type: application/json", `x-test: a${char}b`], "{}"),
      expect: valueByte(byte) ? "passed" : "refused",
    });
  }
  const more: [string, string, "passed" | "refused"][] = [
    ["status 600", rawAnswer(600, [], "{}"), "refused"],
    ["status 999", rawAnswer(999, [], "{}"), "refused"],
    ["status 099", rawAnswer(99, [], "{}"), "refused"],
    // A protocol switch nobody asked for: passed on, it would switch the TPP's connection.
    ["status 101", rawAnswer(101, ["upgrade: h2c", "connection: upgrade"], "{}"), "refused"],
    ["status 101, no upgrade", rawAnswer(101, [], "{}"), "refused"],
    ["HTTP/2 status line", rawAnswer(200, [], "{}").replace("HTTP/1.1", "HTTP/2"), "refused"],
    ["obsolete line folding", rawAnswer(200, ["x-a: 1", " folded"], "{}"), "refused"],
    ["space before the colon", rawAnswer(200, ["x-a : 1"], "{}"), "refused"],
    ["empty name", rawAnswer(200, [": 1"], "{}"), "refused"],
    ["conflicting lengths", rawAnswer(200, ["content-length: 3"], "{}"), "refused"],
    ["205 with a body", rawAnswer(205, [], "{}"), "passed"],
    ["value of spaces", rawAnswer(200, ["x-a:    "], "{}"), "passed"],
  ];
  for (const [name, answer, expect] of more) cases.push({ name, answer, expect });
  return cases;
}

Deno.test("upstream answers RFC 9110 does not allow: both clients refuse the same, every byte of a name and a value", async () => {
  await using core = startFaultyUpstream();
  const results: Record<string, Record<string, string>> = { http1: {}, fetch: {} };
  for (const client of ["http1", "fetch"] as const) {
    await using gateway = await startGateway({ policy: policy(client), upstream: core.url });
    for (const { name, answer } of corpus()) {
      core.fault = { kind: "raw", parts: [{ bytes: answer }] };
      const result = results[client][name] = await outcome(gateway);
      // The gateway's own client closes a connection that carried a refused answer.
      if (client === "http1" && result === "refused" && !(await ends(core.connections.at(-1)!))) {
        results[client][name] = "refused, connection kept";
      }
    }
  }
  const wrong: string[] = [];
  for (const { name, expect } of corpus()) {
    for (const client of ["http1", "fetch"]) {
      if (results[client][name] !== expect) {
        wrong.push(`${client}: ${name} ${results[client][name]}, expected ${expect}`);
      }
    }
  }
  assert.deepEqual(wrong, []);
});
