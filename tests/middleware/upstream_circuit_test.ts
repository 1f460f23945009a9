import assert from "node:assert/strict";
// In-process through the app's fetch (the upstream is still real HTTP); see tests/support/gateway.ts.
import { gatewayApp as startGateway } from "../support/gateway.ts";
import { passthroughPolicy } from "../support/policies.ts";
import { closedPort, startUpstream } from "../support/upstream.ts";
import { Breakers } from "../../src/upstream/breakers.ts";
import { waitFor } from "../support/wait.ts";

const TOKEN = "metrics-token-for-tests";

/** An upstream on 127.0.0.1 that answers `state.status`, once `state.hold` (if set) settles. */
function switchableUpstream() {
  const state = { status: 500, hold: undefined as Promise<void> | undefined };
  const upstream = startUpstream(async () => {
    await state.hold;
    return Response.json({ status: state.status }, { status: state.status });
  });
  return { upstream, state };
}

function policy(circuit: Record<string, unknown>) {
  return passthroughPolicy({
    // One caller here: its failures open the origin's circuit (tests/security/
    // upstream_fair_shares_test.ts has callers that fail apart).
    defaults: { upstream_circuit: { mode: "enforce", failing_callers: 1, ...circuit } },
    metrics: { token: TOKEN },
    readiness: { interval: "100ms" },
  });
}

async function status(response: Promise<Response>): Promise<number> {
  const answer = await response;
  await answer.body?.cancel();
  return answer.status;
}

const read = (gateway: { fetch(path: string): Promise<Response> }) =>
  gateway.fetch("/v1/products/deposits");

const pay = (gateway: { fetch(path: string, init?: RequestInit): Promise<Response> }) =>
  gateway.fetch("/v1/payments/sepa-credit-transfers", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{}",
  });

/** A clock for the gateway that moves only when the test moves it. */
function testClock() {
  const clock = { at: Date.now(), now: () => clock.at };
  return clock;
}

Deno.test("upstreamCircuit() opens after failures in a row and answers 503 with Retry-After without touching the core", async () => {
  const { upstream } = switchableUpstream();
  await using _ = upstream;
  const breakers = new Breakers();
  await using gateway = await startGateway({
    upstream: upstream.url,
    policy: policy({ failures: 3, open_for: "2s" }),
    services: { breakers },
  });
  for (let i = 0; i < 3; i++) assert.equal(await status(read(gateway)), 500);
  const refused = await read(gateway);
  assert.equal(refused.status, 503);
  assert.equal(refused.headers.get("retry-after"), "2");
  assert.equal((await refused.json()).tppMessages[0].code, "UPSTREAM_UNAVAILABLE");
  assert.equal(upstream.received.length, 3);
  const ready = await gateway.fetch("/readyz");
  assert.equal(ready.status, 503);
  assert.deepEqual((await ready.json()).dependencies.circuit, { state: "open" });
  const metrics = await (await gateway.fetch("/metrics", {
    headers: { authorization: `Bearer ${TOKEN}` },
  })).text();
  assert.match(
    metrics,
    /xs2a_circuit_transitions_total\{circuit="http:\/\/127\.0\.0\.1:\d+",to="open"\} 1/,
  );
  assert.match(metrics, /xs2a_circuit_rejections_total\{circuit="[^"]+"\} 1/);
  assert.match(metrics, /xs2a_circuits_open 1/);
  const line = gateway.log.lines.find((l) => l.status === 503 && l.findings);
  assert.match(JSON.stringify(line?.findings), /"check":"upstream_circuit"/);
  assert.ok(gateway.log.lines.some((l) => l.msg === "circuit open"));
});

Deno.test("upstreamCircuit() never sends a write while the circuit is open", async () => {
  const { upstream } = switchableUpstream();
  await using _ = upstream;
  await using gateway = await startGateway({
    upstream: upstream.url,
    policy: policy({ failures: 2, open_for: "1m" }),
  });
  assert.equal(await status(read(gateway)), 500);
  assert.equal(await status(read(gateway)), 500);
  for (let i = 0; i < 3; i++) assert.equal(await status(pay(gateway)), 503);
  assert.equal(upstream.received.filter((r) => r.method === "POST").length, 0);
  assert.equal(upstream.received.length, 2);
});

Deno.test("upstreamCircuit() counts connection errors as failures", async () => {
  await using gateway = await startGateway({
    upstream: `http://127.0.0.1:${closedPort()}`,
    policy: policy({ failures: 2, open_for: "1m" }),
  });
  assert.equal(await status(read(gateway)), 503);
  assert.equal(await status(read(gateway)), 503);
  const refused = await read(gateway);
  assert.equal(refused.status, 503);
  assert.match((await refused.json()).tppMessages[0].text, /paused after repeated failures/);
});

Deno.test("upstreamCircuit() half-opens after open_for, lets one probe through and closes on its success", async () => {
  const { upstream, state } = switchableUpstream();
  await using _ = upstream;
  const breakers = new Breakers();
  const clock = testClock();
  await using gateway = await startGateway({
    upstream: upstream.url,
    policy: policy({ failures: 2, open_for: "300ms" }),
    services: { breakers, now: clock.now },
  });
  assert.equal(await status(read(gateway)), 500);
  assert.equal(await status(read(gateway)), 500);
  assert.equal(await status(read(gateway)), 503);
  clock.at += 299;
  assert.equal(await status(read(gateway)), 503, "a millisecond before open_for ends");
  clock.at += 1;
  assert.equal(breakers.originState(clock.at), "half-open");
  state.status = 200;
  // The probe reaches the core and is held there; the others are refused while it is out.
  const held = Promise.withResolvers<void>();
  state.hold = held.promise;
  const probe = status(read(gateway));
  assert.ok(await waitFor(() => upstream.received.length === 3), "the probe at the core");
  const others = await Promise.all([read(gateway), read(gateway)].map(status))
    .finally(held.resolve);
  assert.deepEqual(others, [503, 503]);
  assert.equal(await probe, 200);
  assert.equal(upstream.received.length, 3);
  assert.equal(breakers.originState(clock.at), "closed");
  state.hold = undefined;
  assert.equal(await status(read(gateway)), 200);
  assert.equal(
    (await (await gateway.fetch("/readyz")).json()).dependencies.circuit.state,
    "closed",
  );
});

Deno.test("upstreamCircuit() opens again when the half-open probe fails", async () => {
  const { upstream } = switchableUpstream();
  await using _ = upstream;
  const breakers = new Breakers();
  const clock = testClock();
  await using gateway = await startGateway({
    upstream: upstream.url,
    policy: policy({ failures: 1, open_for: "200ms" }),
    services: { breakers, now: clock.now },
  });
  assert.equal(await status(read(gateway)), 500);
  clock.at += 200;
  assert.equal(await status(read(gateway)), 500);
  assert.equal(breakers.originState(clock.at), "open");
  assert.equal(await status(read(gateway)), 503);
  assert.equal(upstream.received.length, 2);
});

Deno.test("upstreamCircuit() opens on a failure ratio over its window", async () => {
  let n = 0;
  await using upstream = startUpstream(() => new Response(null, { status: n++ % 2 ? 200 : 502 }));
  await using gateway = await startGateway({
    upstream: upstream.url,
    policy: policy({ failure_ratio: 0.5, min_requests: 4, window: "10s", open_for: "1m" }),
  });
  // 502, 200, 502, 200: never two failures in a row, half of four in the window (the proxy
  // answers the core's 502 with its own 503).
  assert.deepEqual(
    [await status(read(gateway)), await status(read(gateway)), await status(read(gateway))],
    [503, 200, 503],
  );
  assert.equal(await status(read(gateway)), 200);
  assert.equal(await status(read(gateway)), 503);
  assert.equal(await status(read(gateway)), 503);
  assert.equal(upstream.received.length, 5, "the circuit answered the sixth");
});

Deno.test("upstreamCircuit() with scope operation keeps other operations flowing", async () => {
  await using upstream = startUpstream((_, recorded) =>
    new Response(null, { status: recorded.path.includes("deposits") ? 500 : 200 })
  );
  await using gateway = await startGateway({
    upstream: upstream.url,
    policy: policy({ scope: "operation", failures: 1, open_for: "1m" }),
  });
  assert.equal(await status(read(gateway)), 500);
  assert.equal(await status(read(gateway)), 503);
  assert.equal(await status(gateway.fetch("/v1/products/cards")), 200);
  // Operation breakers do not make the instance not ready.
  const ready = await (await gateway.fetch("/readyz")).json();
  assert.equal(ready.dependencies.circuit.state, "none");
});
