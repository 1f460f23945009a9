/**
 * Issue 35.9: `metrics.port` answered without `METRICS_TOKEN` when one was set, so whoever reached
 * the port (often more than the operator meant) read the gateway's traffic figures. With a token
 * set, the metrics port asks for it as the main port does.
 */
import assert from "node:assert/strict";
import { serveTestGateway } from "../support/served_gateway.ts";
import { passthroughPolicy, policyYaml } from "../support/policies.ts";
import { startUpstream } from "../support/upstream.ts";

const TOKEN = "metrics-token-of-32-characters-x";

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

async function scrape(port: number, authorization?: string) {
  const response = await fetch(`http://127.0.0.1:${port}/metrics`, {
    headers: authorization ? { authorization } : {},
  });
  return { status: response.status, text: await response.text(), headers: response.headers };
}

Deno.test("metrics.port asks for the metrics token when the policy sets one", async () => {
  await using upstream = startUpstream();
  const port = freePort();
  await using _served = await serveTestGateway({
    policy: policyYaml(passthroughPolicy({
      upstream: { url: upstream.url },
      metrics: { port: String(port), token: TOKEN },
    })),
  });
  const anonymous = await scrape(port);
  assert.equal(anonymous.status, 401);
  assert.doesNotMatch(anonymous.text, /xs2a_/);
  assert.equal(anonymous.headers.get("www-authenticate"), "Bearer");
  const wrong = await scrape(port, `Bearer ${TOKEN.slice(0, -1)}y`);
  assert.equal(wrong.status, 401);
  const right = await scrape(port, `Bearer ${TOKEN}`);
  assert.equal(right.status, 200);
  assert.match(right.text, /xs2a_workers 1/);
});

Deno.test("metrics.port without a token in the policy answers every scrape (the port is the boundary)", async () => {
  await using upstream = startUpstream();
  const port = freePort();
  await using _served = await serveTestGateway({
    policy: policyYaml(passthroughPolicy({
      upstream: { url: upstream.url },
      metrics: { port: String(port) },
    })),
  });
  const open = await scrape(port);
  assert.equal(open.status, 200);
  assert.match(open.text, /xs2a_workers 1/);
});
