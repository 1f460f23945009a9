import { PIPELINE } from "../../../middleware/mod.ts";
import assert from "node:assert/strict";
import { serveGateway } from "../../../src/http/server.ts";
import { defaultServices } from "../../../src/core/services.ts";
import { memoryLogger } from "../../../src/lib/log.ts";
import { startUpstream } from "../../support/upstream.ts";
import { passthroughPolicy } from "../../support/policies.ts";

const ID = "3c2b1a09-8f7e-4d6c-9b5a-4e3d2c1b0a9f";

async function policyFile(text: string): Promise<string> {
  const file = await Deno.makeTempFile({ suffix: ".yaml" });
  await Deno.writeTextFile(file, text);
  return file;
}

/** A policy where only the body limit (and the given sections) matter. */
function policy(upstream: string, maxBytes = 1000, sections: Record<string, unknown> = {}) {
  return passthroughPolicy({ defaults: { body_limit: { max_bytes: maxBytes } }, sections })
    .replace("${UPSTREAM_URL}", upstream);
}

async function post(url: string, size: number) {
  const response = await fetch(`${url}/v1/consents`, {
    method: "POST",
    headers: { "x-request-id": ID, "content-type": "application/json" },
    body: JSON.stringify({ pad: "x".repeat(size) }),
  });
  await response.body?.cancel();
  return response.status;
}

Deno.test("serveGateway() reloads a good policy and refuses a bad one while serving", async () => {
  await using upstream = startUpstream();
  const file = await policyFile(policy(upstream.url));
  const log = memoryLogger();
  const services = defaultServices({ log });
  const server = await serveGateway({
    file,
    pipeline: PIPELINE,
    hostname: "127.0.0.1",
    port: 0,
    services,
  });
  const url = `http://127.0.0.1:${server.addr.port}`;
  try {
    assert.equal(await post(url, 200), 200);
    await Deno.writeTextFile(file, policy(upstream.url, 100));
    assert.equal(await server.reload(), true);
    assert.equal(await post(url, 200), 413, "the new limit applies");

    await Deno.writeTextFile(file, policy(upstream.url, 100) + "defaults_typo: {}\n");
    assert.equal(await server.reload(), false);
    assert.equal(await post(url, 200), 413, "the previous policy keeps serving");
    assert.equal(await post(url, 10), 200);
    const refused = log.lines.find((l) => String(l.msg).startsWith("policy reload refused"));
    assert.ok(refused, "the refusal is logged");
    assert.match(JSON.stringify(refused.problems), /defaults_typo/);
    assert.equal(services.metrics.reloads.value({ outcome: "refused" }), 1);
    assert.equal(services.metrics.reloads.value({ outcome: "applied" }), 1);
  } finally {
    await server.shutdown();
  }
});

Deno.test("serveGateway() reloads when the policy file changes", async () => {
  await using upstream = startUpstream();
  const file = await policyFile(policy(upstream.url));
  const services = defaultServices({ log: memoryLogger() });
  const server = await serveGateway({
    file,
    pipeline: PIPELINE,
    hostname: "127.0.0.1",
    port: 0,
    services,
    watch: true,
  });
  const url = `http://127.0.0.1:${server.addr.port}`;
  try {
    assert.equal(await post(url, 200), 200);
    await Deno.writeTextFile(file, policy(upstream.url, 100));
    for (let i = 0; i < 50 && services.metrics.reloads.value({ outcome: "applied" }) === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(await post(url, 200), 413);
  } finally {
    await server.shutdown();
  }
});

Deno.test("serveGateway() lets a request in flight finish on shutdown", async () => {
  await using upstream = startUpstream(async () => {
    await new Promise((r) => setTimeout(r, 300));
    return Response.json({ consentStatus: "valid" });
  });
  const file = await policyFile(policy(upstream.url));
  const server = await serveGateway({
    file,
    pipeline: PIPELINE,
    hostname: "127.0.0.1",
    port: 0,
    services: defaultServices({ log: memoryLogger() }),
  });
  const url = `http://127.0.0.1:${server.addr.port}`;
  const inFlight = fetch(`${url}/v1/consents/c-1/status`, { headers: { "x-request-id": ID } });
  await new Promise((r) => setTimeout(r, 100));
  await server.shutdown(5000);
  const response = await inFlight;
  assert.equal(response.status, 200);
  assert.deepEqual(await response.json(), { consentStatus: "valid" });
  await assert.rejects(fetch(`${url}/healthz`), "no new connections after shutdown");
});

Deno.test("metrics are scraped on their own port and move with traffic", async () => {
  await using upstream = startUpstream();
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const metricsPort = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const file = await policyFile(
    policy(upstream.url, 100, { metrics: { port: String(metricsPort) } }),
  );
  const server = await serveGateway({
    file,
    pipeline: PIPELINE,
    hostname: "127.0.0.1",
    port: 0,
    services: defaultServices({ log: memoryLogger() }),
  });
  const url = `http://127.0.0.1:${server.addr.port}`;
  try {
    assert.equal(await post(url, 10), 200);
    assert.equal(await post(url, 10), 200);
    assert.equal(await post(url, 500), 413);
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    assert.match(text, /xs2a_requests_total\{op="createConsent",status="200"\} 2/);
    assert.match(text, /xs2a_requests_total\{op="createConsent",status="413"\} 1/);
    assert.match(text, /xs2a_rejections_total\{check="body_limit",code="PAYLOAD_TOO_LARGE"\} 1/);
    assert.match(text, /xs2a_upstream_duration_seconds_count\{op="createConsent"\} 2/);
    const main = await fetch(`${url}/metrics`);
    assert.equal(main.status, 404, "not on the main port without a token");
    await main.body?.cancel();
  } finally {
    await server.shutdown();
  }
});

Deno.test("metrics on the main port need the bearer token", async () => {
  await using upstream = startUpstream();
  const token = "s3cret-metrics-token-0123456789";
  const file = await policyFile(policy(upstream.url, 100, { metrics: { token } }));
  const server = await serveGateway({
    file,
    pipeline: PIPELINE,
    hostname: "127.0.0.1",
    port: 0,
    services: defaultServices({ log: memoryLogger() }),
  });
  const url = `http://127.0.0.1:${server.addr.port}`;
  try {
    const anonymous = await fetch(`${url}/metrics`);
    assert.equal(anonymous.status, 401);
    await anonymous.body?.cancel();
    const wrong = await fetch(`${url}/metrics`, { headers: { authorization: "Bearer nope" } });
    assert.equal(wrong.status, 401);
    await wrong.body?.cancel();
    const scraped = await fetch(`${url}/metrics`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(scraped.status, 200);
    assert.match(await scraped.text(), /# TYPE xs2a_requests_total counter/);
  } finally {
    await server.shutdown();
  }
});

Deno.test("metrics show how many entries the memory store holds", async () => {
  await using upstream = startUpstream();
  const token = "s3cret-metrics-token-0123456789";
  const file = await policyFile(
    passthroughPolicy({
      defaults: { idempotency: { mode: "enforce" } },
      sections: { metrics: { token } },
    }).replace("${UPSTREAM_URL}", upstream.url),
  );
  const server = await serveGateway({
    file,
    pipeline: PIPELINE,
    hostname: "127.0.0.1",
    port: 0,
    services: defaultServices({ log: memoryLogger() }),
  });
  const url = `http://127.0.0.1:${server.addr.port}`;
  const scrape = async () =>
    await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } }))
      .text();
  try {
    assert.match(await scrape(), /\n# TYPE xs2a_store_entries gauge\nxs2a_store_entries 0\n/);
    assert.equal(await post(url, 10), 200);
    assert.match(await scrape(), /\nxs2a_store_entries 1\n/, "the kept answer of the POST");
  } finally {
    await server.shutdown();
  }
});
