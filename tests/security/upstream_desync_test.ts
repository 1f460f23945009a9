/**
 * Issue 18.2: a late answer reached the next TPP. When the core wrote an extra answer (or a body
 * after a 204) on a kept-alive connection, the next request on that connection, from another TPP,
 * received it. Bytes that arrive when no request waits for them now poison the connection, and an
 * answer whose echoed X-Request-ID is another request's is refused.
 */
import assert from "node:assert/strict";
import { rawAnswer, startFaultyUpstream } from "../support/faulty_upstream.ts";
import { startGateway } from "../support/gateway.ts";
import { buildPolicy } from "../support/policies.ts";

function policy(client: "http1" | "fetch", reuse: "echoed" | "always" = "echoed") {
  return buildPolicy({ upstream: { url: "${UPSTREAM_URL}", client, reuse } });
}

/** A JSON answer that echoes the request's X-Request-ID, as many cores do. */
function echoing(id: string, body: Record<string, unknown>, status = 200): string {
  return rawAnswer(
    status,
    ["content-type: application/json", `x-request-id: ${id}`],
    JSON.stringify(body),
  );
}

function read(gateway: { fetch(path: string, init?: RequestInit): Promise<Response> }, id: string) {
  return gateway.fetch("/v1/consents/c-1/status", { headers: { "x-request-id": id } });
}

Deno.test("a late extra answer of the core never reaches the next request: 503 when it echoes another X-Request-ID", async () => {
  for (const client of ["http1", "fetch"] as const) {
    const victim = crypto.randomUUID();
    await using core = startFaultyUpstream((request) => {
      const id = request.headers.get("x-request-id")!;
      const own = rawAnswer(200, ["content-type: application/json"], JSON.stringify({ for: id }));
      if (id === victim) {
        // The answer, then a second one for the same request (echoing its id) while the
        // connection idles.
        return {
          kind: "raw",
          parts: [
            { bytes: own },
            { bytes: echoing(id, { for: id, secret: "the victim's" }), delayMs: 60 },
          ],
        };
      }
      // Every later request's own answer comes later than the stray one, without an echo.
      return { kind: "raw", parts: [{ bytes: own, delayMs: 150 }] };
    });
    // Under reuse: echoed the core's answers without an echo never leave a connection to reuse
    // (upstream_late_answer_test.ts); with every connection reused, the echo still catches it.
    await using gateway = await startGateway({
      policy: policy(client, "always"),
      upstream: core.url,
    });
    const first = await read(gateway, victim);
    assert.deepEqual(await first.json(), { for: victim }, client);

    // The next request gets the stray answer: refused, never passed on.
    const next = crypto.randomUUID();
    const second = await read(gateway, next);
    const text = await second.text();
    assert.doesNotMatch(text, /the victim's/, client);
    assert.equal(second.status, 503, client);
    assert.equal(JSON.parse(text).tppMessages[0].code, "UPSTREAM_UNAVAILABLE", client);
    assert.equal(second.headers.get("x-request-id"), next, client);

    // The connection out of step is not used again: the one after gets its own answer, never
    // the answer the core wrote for the request before.
    const third = crypto.randomUUID();
    const after = await read(gateway, third);
    assert.deepEqual(await after.json(), { for: third }, client);
    assert.deepEqual(
      core.requests.map((r) => r.headers.get("x-request-id")),
      [victim, next, third],
      client,
    );
  }
});

Deno.test("bytes the core sends on an idle kept-alive connection poison it: the next request goes on a new one", async () => {
  const ids = [crypto.randomUUID(), crypto.randomUUID()];
  let calls = 0;
  await using core = startFaultyUpstream((request) => {
    const id = request.headers.get("x-request-id")!;
    if (calls++ > 0) {
      return { kind: "raw", parts: [{ bytes: echoing(id, { consentStatus: "own" }) }] };
    }
    // A 204, then, while the connection idles, a body nobody asked for.
    return {
      kind: "raw",
      parts: [
        { bytes: rawAnswer(204, [`x-request-id: ${id}`], "", { length: false }) },
        { bytes: echoing(id, { consentStatus: "stray" }), delayMs: 30 },
      ],
    };
  });
  await using gateway = await startGateway({ policy: policy("http1"), upstream: core.url });
  const first = await read(gateway, ids[0]);
  await first.body?.cancel();
  assert.equal(first.status, 204);
  await new Promise((resolve) => setTimeout(resolve, 100));
  const second = await read(gateway, ids[1]);
  assert.deepEqual(await second.json(), { consentStatus: "own" });
  assert.equal(core.requests[1].connection, 2, "a new connection");
  assert.equal(await core.connections[0].ended, "peer", "the gateway closed the poisoned one");
});

Deno.test("a body after a 204 in the same write is never taken as the next answer", async () => {
  const ids = [crypto.randomUUID(), crypto.randomUUID()];
  await using core = startFaultyUpstream((request) => {
    const id = request.headers.get("x-request-id")!;
    if (id === ids[1]) {
      return { kind: "raw", parts: [{ bytes: echoing(id, { consentStatus: "own" }) }] };
    }
    return {
      kind: "raw",
      parts: [{
        bytes: rawAnswer(204, [`x-request-id: ${id}`], "", { length: false }) +
          echoing(id, { consentStatus: "stray" }),
      }],
    };
  });
  await using gateway = await startGateway({ policy: policy("http1"), upstream: core.url });
  const first = await read(gateway, ids[0]);
  await first.body?.cancel();
  assert.equal(first.status, 204);
  const second = await read(gateway, ids[1]);
  assert.deepEqual(await second.json(), { consentStatus: "own" });
  assert.equal(core.requests[1].connection, 2, "a new connection");
});
