/**
 * Attacks on the gateway's operation: its own endpoints and its resources (issue 18, items 11
 * and 19). Each test asserts what the attacker gets and what reached the core.
 */
import assert from "node:assert/strict";
import { startGateway } from "../support/gateway.ts";
import { passthroughPolicy } from "../support/policies.ts";
import { startUpstream } from "../support/upstream.ts";
import { waitFor } from "../support/wait.ts";

Deno.test("operations: a flood of /readyz probes the core at most once per interval", async () => {
  await using upstream = startUpstream();
  // The gateway's clock is the test's: the interval passes when the test says, to the millisecond.
  let now = Date.now();
  await using gateway = await startGateway({
    policy: passthroughPolicy({ readiness: { interval: "400ms" } }),
    upstream: upstream.url,
    services: { now: () => now },
  });
  const probes = () => upstream.received.filter((r) => r.path === "/").length;
  const flood = async (n: number) => {
    const answers = await Promise.all(
      Array.from({ length: n }, () => gateway.fetch("/readyz").then((r) => r.json())),
    );
    return answers.map((a) => a.status);
  };
  // Concurrent and sequential calls inside one interval: one probe, every caller answered.
  assert.deepEqual(new Set(await flood(50)), new Set(["ready"]));
  for (let i = 0; i < 10; i++) await flood(1);
  assert.equal(probes(), 1, "one probe reached the core");
  now += 399;
  await flood(5);
  assert.equal(probes(), 1, "a millisecond before the interval ends: still the cached answer");
  // Once the interval has passed, the next call probes again, once.
  now += 1;
  await flood(20);
  assert.equal(probes(), 2);
});

/** A child's stderr as text so far, read in the background. */
function collect(stream: ReadableStream<Uint8Array>) {
  const said = { text: "", done: false };
  (async () => {
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) said.text += chunk;
    said.done = true;
  })();
  return said;
}

/** Waits until `done()` holds, for at most `ms`. */

Deno.test("operations: running out of file descriptors does not end the process; it serves again once they are free", async () => {
  await using upstream = startUpstream();
  const { closedPort } = await import("../support/upstream.ts");
  const port = closedPort();
  // main.ts under a low descriptor limit (the runtime itself holds about 30).
  const child = new Deno.Command("bash", {
    args: ["-c", `ulimit -n 64 && exec "${Deno.execPath()}" run --allow-all main.ts`],
    env: { PORT: String(port), UPSTREAM_URL: upstream.url, GATEWAY_WATCH: "false" },
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const said = collect(child.stderr);
  const url = `http://127.0.0.1:${port}`;
  try {
    assert.ok(await waitFor(() => said.text.includes("xs2a-edge on"), 20_000), said.text);
    // The attack: more connections than descriptors, held open without a byte.
    const held: Deno.TcpConn[] = [];
    for (let i = 0; i < 120; i++) {
      try {
        held.push(await Deno.connect({ hostname: "127.0.0.1", port }));
      } catch {
        break; // refused: the listener is down for now
      }
    }
    assert.ok(
      await waitFor(() => said.text.includes("the listener failed"), 5000),
      `the failure is logged: ${said.text}`,
    );
    for (const conn of held) conn.close();
    // Served again within the longest pause (2 s) once descriptors are free.
    let status = 0;
    for (let i = 0; i < 60 && status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 100));
      status = await fetch(`${url}/healthz`).then(async (r) => {
        await r.body?.cancel();
        return r.status;
      }, () => 0);
    }
    assert.equal(status, 200, said.text);
    const response = await fetch(`${url}/v1/consents/c-1/status`, {
      headers: { "x-request-id": crypto.randomUUID() },
    });
    await response.body?.cancel();
    assert.equal(response.status, 200);
    assert.equal(upstream.received.length, 1, "the request after the flood reached the core");
    // Each line JSON; a few lines, not a flood.
    await new Promise((r) => setTimeout(r, 200));
    const lines = said.text.split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l));
    assert.ok(lines.length < 30, `${lines.length} lines`);
    assert.ok(!lines.some((l) => String(l.msg).startsWith("uncaught")), said.text);
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await waitFor(() => said.done, 2000);
  }
});
