/**
 * Shadow rollout: a candidate judges every request in report mode, on a copy of the request; the
 * answer is the live policy's, the core is asked once, and a differing decision is logged and
 * counted.
 */
import assert from "node:assert/strict";
import { DEFAULT_POLICY, gatewayApp } from "../../support/gateway.ts";
import { initiationHeaders, singlePayment } from "../../support/requests.ts";
import { PolicyError } from "../../../src/policy/load.ts";

/** An upstream on 127.0.0.1 that echoes each body and counts what reached it. */
function core() {
  const seen: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (r) => {
    seen.push(await r.text());
    return Response.json(
      { transactionStatus: "RCVD", paymentId: "p-1", echo: seen.at(-1) },
      { status: r.method === "POST" ? 201 : 200 },
    );
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    seen,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

/** The default policy naming a candidate: the default policy with `change` appended. */
async function withCandidate(change: string): Promise<string> {
  const file = await Deno.makeTempFile({ suffix: ".yaml" });
  await Deno.writeTextFile(file, DEFAULT_POLICY + change);
  return `${DEFAULT_POLICY}\nshadow: ${file}\n`;
}

const CANDIDATE = `
operations:
  getAccountList:
    psu_ip_address: { public_only: true }
    psu_device_id: { mode: report }
`;

const READ = { "consent-id": "c-1", "psu-ip-address": "192.0.2.10" };

function shadowLines(log: { lines: Record<string, unknown>[] }) {
  return log.lines.filter((l) => l.audit === "shadow");
}

Deno.test("shadow: a request the candidate would refuse passes, and the difference is logged", async () => {
  await using upstream = core();
  await using gateway = await gatewayApp({
    upstream: upstream.url,
    policy: await withCandidate(CANDIDATE),
  });
  const response = await gateway.fetch("/v1/accounts", {
    headers: { ...READ, "x-request-id": crypto.randomUUID() },
  });
  assert.equal(response.status, 200);
  await response.body?.cancel();
  assert.equal(upstream.seen.length, 1);
  const [line] = shadowLines(gateway.log);
  assert.deepEqual(
    { op: line.op, live: line.live, candidate: line.candidate },
    {
      op: "getAccountList",
      live: { outcome: "pass" },
      candidate: { outcome: "refuse", check: "psu_ip_address", code: "FORMAT_ERROR", status: 400 },
    },
  );
  // The access log's findings are the live chain's only.
  const access = gateway.log.lines.find((l) => l.op === "getAccountList" && "status" in l)!;
  assert.equal(access.findings, undefined);
});

Deno.test("shadow: a live refusal the candidate only reports is logged the other way", async () => {
  await using upstream = core();
  await using gateway = await gatewayApp({
    upstream: upstream.url,
    policy: await withCandidate(CANDIDATE),
  });
  const response = await gateway.fetch("/v1/accounts", {
    headers: {
      "consent-id": "c-1",
      "psu-ip-address": "85.214.132.117",
      "psu-device-id": "not-a-uuid",
      "x-request-id": crypto.randomUUID(),
    },
  });
  assert.equal(response.status, 400);
  await response.body?.cancel();
  const [line] = shadowLines(gateway.log);
  assert.deepEqual(line.live, {
    outcome: "refuse",
    check: "psu_device_id",
    code: "FORMAT_ERROR",
    status: 400,
  });
  assert.deepEqual(line.candidate, { outcome: "pass" });
});

Deno.test("shadow: the same decision is neither logged nor counted", async () => {
  await using upstream = core();
  await using gateway = await gatewayApp({
    upstream: upstream.url,
    policy: await withCandidate(CANDIDATE),
  });
  for (const ip of ["85.214.132.117", "not-an-address"]) {
    const response = await gateway.fetch("/v1/accounts", {
      headers: { ...READ, "psu-ip-address": ip, "x-request-id": crypto.randomUUID() },
    });
    await response.body?.cancel();
  }
  assert.deepEqual(shadowLines(gateway.log), []);
});

Deno.test("shadow: the candidate touches neither the store nor the core, nor the body", async () => {
  await using upstream = core();
  // The candidate is the live policy itself: were its idempotency check to run against the
  // store, the live one would find the X-Request-ID used; were its proxy to run, the core would
  // be asked twice; were it to read the live body, the core would get none.
  await using gateway = await gatewayApp({
    upstream: upstream.url,
    policy: await withCandidate(""),
  });
  const body = JSON.stringify(singlePayment());
  const response = await gateway.fetch("/v1/payments/sepa-credit-transfers", {
    method: "POST",
    headers: { ...initiationHeaders(), "x-request-id": crypto.randomUUID() },
    body,
  });
  assert.equal(response.status, 201);
  await response.body?.cancel();
  assert.deepEqual(upstream.seen, [body]);
  assert.deepEqual(shadowLines(gateway.log), []);
});

Deno.test("shadow: the differences are counted in /metrics", async () => {
  await using upstream = core();
  const token = "a-metrics-token-of-16";
  await using gateway = await gatewayApp({
    upstream: upstream.url,
    policy: (await withCandidate(CANDIDATE)).replace(
      /\nmetrics:\n {2}port: .*\n {2}token: .*\n/,
      `\nmetrics:\n  token: ${token}\n`,
    ),
  });
  for (let i = 0; i < 2; i++) {
    const response = await gateway.fetch("/v1/accounts", {
      headers: { ...READ, "x-request-id": crypto.randomUUID() },
    });
    await response.body?.cancel();
  }
  const metrics = await gateway.fetch("/metrics", {
    headers: { authorization: `Bearer ${token}` },
  });
  assert.match(
    await metrics.text(),
    /^xs2a_shadow_differences_total\{op="getAccountList",check="psu_ip_address",live="pass",shadow="refuse"\} 2$/m,
  );
});

Deno.test("shadow: an invalid candidate stops the policy from loading, naming it", async () => {
  const policy = await withCandidate("\ndefaults:\n  psu_device_id: { mode: sometimes }\n");
  await assert.rejects(
    gatewayApp({ upstream: "http://127.0.0.1:9", policy }),
    (error: unknown) =>
      error instanceof PolicyError && error.problems.some((p) => p.startsWith('shadow "')),
  );
});
