/**
 * Issue 35.8: a core's 5xx body (an HTML stack trace naming internal hosts) reached the TPP. A 5xx
 * of the core now becomes the gateway's Berlin Group error, the core's body goes to the log, and
 * the checks that count the core's failures (the breaker) still see its status. Passing the
 * core's body on is the policy's choice (`proxy.core_errors: pass`).
 */
import assert from "node:assert/strict";
import { startGateway } from "../support/gateway.ts";
import { buildPolicy, passthroughPolicy, type PolicyInput } from "../support/policies.ts";
import { startUpstream } from "../support/upstream.ts";

const TRACE = "<html><body><h1>500</h1><pre>java.sql.SQLException: Connection refused " +
  "to core-db-07.int.bank.local:5432\n\tat com.bank.core.AccountDao.find(AccountDao.java:88)" +
  "</pre></body></html>";

function read(gateway: { fetch(path: string, init?: RequestInit): Promise<Response> }) {
  return gateway.fetch("/v1/accounts", {
    headers: { "x-request-id": crypto.randomUUID(), "consent-id": "c-1" },
  });
}

async function coreAnswering(
  status: number,
  headers: Record<string, string>,
  policy: PolicyInput = passthroughPolicy(),
) {
  const core = startUpstream(() =>
    new Response(TRACE, { status, headers: { "content-type": "text/html", ...headers } })
  );
  const gateway = await startGateway({ policy, upstream: core.url });
  return {
    core,
    gateway,
    async [Symbol.asyncDispose]() {
      await gateway.close();
      await core.close();
    },
  };
}

Deno.test("proxy() answers a core's 500 with INTERNAL_ERROR, never the core's body, and logs the body", async () => {
  await using t = await coreAnswering(500, { "x-backend-host": "core-app-3.int.bank.local" });
  const response = await read(t.gateway);
  const body = await response.text();
  assert.equal(response.status, 500);
  assert.equal(response.headers.get("content-type"), "application/json");
  assert.doesNotMatch(body, /int\.bank\.local|SQLException|AccountDao/);
  assert.deepEqual(JSON.parse(body).tppMessages, [{
    category: "ERROR",
    code: "INTERNAL_ERROR",
    text: "The bank failed to process the request",
  }]);
  const logged = t.gateway.log.lines.find((line) => line.msg === "upstream error answer");
  assert.ok(logged, "the core's answer is logged");
  assert.equal(logged.status, 500);
  assert.match(String(logged.body), /core-db-07\.int\.bank\.local/);
});

for (const status of [502, 503, 504]) {
  Deno.test(`proxy() answers a core's ${status} with 503 UPSTREAM_UNAVAILABLE and its valid Retry-After`, async () => {
    await using t = await coreAnswering(status, { "retry-after": "30" });
    const response = await read(t.gateway);
    const body = await response.text();
    assert.equal(response.status, 503);
    assert.doesNotMatch(body, /int\.bank\.local/);
    assert.equal(JSON.parse(body).tppMessages[0].code, "UPSTREAM_UNAVAILABLE");
    assert.equal(response.headers.get("retry-after"), "30");
  });
}

Deno.test("proxy() replaces a core's Retry-After that is not one with the gateway's", async () => {
  await using t = await coreAnswering(503, { "retry-after": "soon, core-2.int.bank.local" });
  const response = await read(t.gateway);
  await response.body?.cancel();
  assert.equal(response.status, 503);
  assert.equal(response.headers.get("retry-after"), "5");
});

Deno.test("proxy() passes a core's 5xx on as it is under core_errors: pass", async () => {
  await using t = await coreAnswering(
    500,
    {},
    buildPolicy(passthroughPolicy(), { defaults: { proxy: { core_errors: "pass" } } }),
  );
  const response = await read(t.gateway);
  assert.equal(response.status, 500);
  assert.equal(await response.text(), TRACE);
});

Deno.test("upstream_circuit() still counts a core's 5xx that the proxy replaced", async () => {
  await using t = await coreAnswering(
    500,
    {},
    buildPolicy(passthroughPolicy(), {
      defaults: { upstream_circuit: { mode: "enforce", failures: 2, open_for: "1m" } },
    }),
  );
  for (let i = 0; i < 2; i++) {
    const response = await read(t.gateway);
    await response.body?.cancel();
    assert.equal(response.status, 500);
  }
  const refused = await read(t.gateway);
  await refused.body?.cancel();
  assert.equal(refused.status, 503, "the circuit opened on the core's failures");
  assert.equal(t.core.received.length, 2, "the third request never reached the core");
});
