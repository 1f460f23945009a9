/**
 * `/readyz` covers every dependency a request needs (issue 37 items 3, 4 and 6): a full memory
 * store, an unreachable JWKS, introspection endpoint or TPP register, a Redis that may forget. Each
 * makes the instance `degraded` (200, named in `problems`, logged once), never `ready`.
 */
import assert from "node:assert/strict";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { startGateway } from "../../support/gateway.ts";
import { passthroughPolicy } from "../../support/policies.ts";
import { closedPort, startUpstream } from "../../support/upstream.ts";
import { startRedisServer, WITHOUT_REDIS } from "../../support/redis.ts";
import { retryUntil } from "../../support/wait.ts";
import { emptyPayment, idempotentGateway, readyz } from "../../support/readiness.ts";
import { MemoryStore } from "../../../src/store/memory.ts";
import { memoryLogger } from "../../../src/lib/log.ts";

Deno.test("/readyz is degraded while the memory store refuses writes, with its cause and capacity; /metrics counts the refusals", async () => {
  await using upstream = startUpstream(() => Response.json({ ok: true }, { status: 201 }));
  const log = memoryLogger();
  // One caller may fill it all here: the subject is a full store, not a caller past its share.
  const store = new MemoryStore({ maxEntries: 3, log, ownerShare: 1 });
  const scraped = { metrics: { token: "metrics-token-for-tests" } };
  await using gateway = await idempotentGateway(upstream.url, {
    sections: scraped,
    services: { store, log },
  });
  const before = await readyz(gateway);
  assert.equal(before.body.status, "ready");
  assert.equal(before.body.dependencies.store.capacity.max_entries, 3);
  const statuses = [];
  for (let i = 0; i < 5; i++) statuses.push((await emptyPayment(gateway)).status);
  assert.deepEqual(statuses.filter((s) => s === 503).length, 2, String(statuses));
  const full = log.lines.filter((line) => line.msg === "store full, writes refused");
  assert.equal(full.length, 1, "logged once, with the cause");
  assert.match(String(full[0].cause), /max_entries 3 reached/);

  // A new app on the same store: the first one's readiness is kept for the interval (5 s).
  await using later = await idempotentGateway(upstream.url, {
    sections: scraped,
    services: { store, log },
  });
  const { status, body } = await readyz(later);
  assert.equal(status, 200);
  assert.equal(body.status, "degraded");
  assert.equal(body.dependencies.store.state, "up", "it answers");
  assert.match(body.dependencies.store.warnings[0], /The memory store is full \(max_entries 3/);
  assert.equal(body.dependencies.store.capacity.refused, 2);
  assert.match(body.problems[0], /^store: The memory store is full/);
  assert.ok(log.lines.some((line) => line.msg === "readiness degraded"));

  const metrics = await (await later.fetch("/metrics", {
    headers: { authorization: "Bearer metrics-token-for-tests" },
  })).text();
  assert.match(metrics, /^xs2a_store_full_total 2$/m);
  assert.match(metrics, /^xs2a_store_warnings 1$/m);
  assert.match(metrics, /^xs2a_store_max_entries 3$/m);
  assert.match(metrics, /^xs2a_store_bytes \d+$/m);
});

/** A JWKS server that answers 503 while `down`, and tokens signed by its key. */
async function jwksServer() {
  const keys = await generateKeyPair("RS256");
  const jwk = { ...await exportJWK(keys.publicKey), kid: "k1", alg: "RS256", use: "sig" };
  const state = { down: true };
  const server = startUpstream(() =>
    state.down ? new Response("down", { status: 503 }) : Response.json({ keys: [jwk] })
  );
  const token = () =>
    new SignJWT({ iss: "https://auth.example", exp: Math.floor(Date.now() / 1000) + 300 })
      .setProtectedHeader({ alg: "RS256", kid: "k1" }).sign(keys.privateKey);
  return { server, state, token };
}

Deno.test("/readyz names an unreachable JWKS (degraded, logged) while tokens get 503, and is ready once it answers", async () => {
  await using upstream = startUpstream();
  const jwks = await jwksServer();
  await using _jwksServer = jwks.server;
  const jwksUrl = `${jwks.server.url}/jwks.json`;
  await using gateway = await startGateway({
    policy: passthroughPolicy({
      readiness: { interval: "100ms" },
      defaults: {
        bearer_token: {
          mode: "enforce",
          jwks_url: jwksUrl,
          issuer: "https://auth.example",
          algorithms: ["RS256"],
        },
      },
    }),
    upstream: upstream.url,
  });
  const { status, body } = await readyz(gateway);
  assert.equal(status, 200);
  assert.equal(body.status, "degraded");
  assert.equal(body.dependencies.jwks.length, 1);
  assert.equal(body.dependencies.jwks[0].source, jwksUrl);
  assert.equal(body.dependencies.jwks[0].state, "down");
  assert.ok(body.problems.some((p: string) => p.startsWith(`jwks ${jwksUrl}: `)));
  const line = gateway.log.lines.find((l) => l.msg === "readiness degraded");
  assert.ok(line, "logged");
  const refused = await gateway.fetch("/v1/accounts", {
    headers: { authorization: `Bearer ${await jwks.token()}`, "x-request-id": crypto.randomUUID() },
  });
  assert.equal(refused.status, 503);
  await refused.body?.cancel();

  jwks.state.down = false;
  const ready = await retryUntil(async () => {
    const answer = await readyz(gateway);
    assert.equal(answer.body.status, "ready");
    return answer.body;
  }, 5000);
  assert.equal(ready.dependencies.jwks[0].state, "up");
  assert.equal(ready.dependencies.jwks[0].keys, 1);
  assert.ok(gateway.log.lines.some((l) => l.msg === "readiness ready"), "the recovery logged");
});

Deno.test("/readyz names an unreachable introspection endpoint (degraded)", async () => {
  await using upstream = startUpstream();
  const url = `http://127.0.0.1:${closedPort()}/introspect`;
  await using gateway = await startGateway({
    policy: passthroughPolicy({
      defaults: {
        bearer_token: {
          mode: "enforce",
          verification: "introspection",
          introspection: { url, client_id: "gateway", client_secret: "secret" },
        },
      },
    }),
    upstream: upstream.url,
  });
  const { status, body } = await readyz(gateway);
  assert.equal(status, 200);
  assert.equal(body.status, "degraded");
  assert.equal(body.dependencies.introspection[0].source, url);
  assert.equal(body.dependencies.introspection[0].state, "down");
  assert.match(body.dependencies.introspection[0].error, /unreachable/);
});

Deno.test({
  name: "/readyz is degraded on a Redis with appendonly no, and shows the settings it read",
  ignore: WITHOUT_REDIS,
  async fn() {
    await using upstream = startUpstream();
    await using redis = await startRedisServer();
    await using gateway = await idempotentGateway(upstream.url, {
      sections: { store: { kind: "redis", url: redis.url } },
    });
    const { status, body } = await readyz(gateway);
    assert.equal(status, 200);
    assert.equal(body.status, "degraded");
    assert.equal(body.dependencies.store.state, "up", "it answers");
    assert.equal(body.dependencies.store.settings.appendonly, "no");
    assert.match(body.dependencies.store.warnings[0], /has appendonly no/);
  },
});

Deno.test({
  name: "/readyz is ready on a Redis with appendonly yes and noeviction",
  ignore: WITHOUT_REDIS,
  async fn() {
    await using upstream = startUpstream();
    await using redis = await startRedisServer({ durable: true });
    await using gateway = await idempotentGateway(upstream.url, {
      sections: { store: { kind: "redis", url: redis.url } },
    });
    const { status, body } = await readyz(gateway);
    assert.equal(status, 200);
    assert.equal(body.status, "ready", JSON.stringify(body));
    assert.deepEqual(body.dependencies.store.settings, {
      appendonly: "yes",
      "maxmemory-policy": "noeviction",
    });
  },
});

Deno.test("/readyz names a TPP register that cannot be loaded (degraded), and is ready once it loads", async () => {
  const { createCa } = await import("../../support/pki.ts");
  const ca = await createCa();
  const state = { down: true };
  const registerText = await Deno.readTextFile("config/tpp_register.example.json");
  await using register = startUpstream(() =>
    state.down
      ? new Response("down", { status: 503 })
      : new Response(registerText, { headers: { "content-type": "application/json" } })
  );
  const source = `${register.url}/register.json`;
  await using upstream = startUpstream();
  await using gateway = await startGateway({
    policy: passthroughPolicy({
      readiness: { interval: "100ms" },
      trust: { anchors: [ca.pem], register: { source, refresh_interval: "1s" } },
      defaults: { tpp_certificate: { mode: "enforce", required: true } },
    }),
    upstream: upstream.url,
  });
  const { status, body } = await readyz(gateway);
  assert.equal(status, 200);
  assert.equal(body.status, "degraded");
  assert.equal(body.dependencies.register.source, source);
  assert.equal(body.dependencies.register.state, "down");
  assert.match(body.dependencies.register.error, /HTTP 503/);

  state.down = false;
  const ready = await retryUntil(async () => {
    const answer = await readyz(gateway);
    assert.equal(answer.body.dependencies.register.state, "up", JSON.stringify(answer.body));
    return answer.body;
  }, 5000);
  assert.equal(ready.status, "ready");
  assert.ok(ready.dependencies.register.entries > 0);
});

Deno.test("/readyz names a revocation source that fails under revocation: hard (degraded)", async () => {
  const { createCa, issue, nginxHeader } = await import("../../support/pki.ts");
  const ca = await createCa();
  const tpp = await issue(ca, { orgId: "PSDGE-NBG-123456" });
  const responder = `http://127.0.0.1:${closedPort()}/ocsp`;
  await using upstream = startUpstream();
  await using gateway = await startGateway({
    policy: passthroughPolicy({
      trust: { anchors: [ca.pem], revocation: { methods: ["ocsp"], ocsp_responder: responder } },
      defaults: { tpp_certificate: { mode: "enforce", required: true, revocation: "hard" } },
    }),
    upstream: upstream.url,
  });
  const refused = await gateway.fetch("/v1/accounts", {
    headers: { "x-ssl-client-cert": nginxHeader(tpp), "x-request-id": crypto.randomUUID() },
  });
  assert.equal(refused.status, 503);
  await refused.body?.cancel();
  const { status, body } = await readyz(gateway);
  assert.equal(status, 200);
  assert.equal(body.status, "degraded");
  assert.equal(body.dependencies.revocation.length, 1);
  assert.equal(body.dependencies.revocation[0].source, `ocsp ${responder}`);
  assert.equal(body.dependencies.revocation[0].state, "down");
  assert.ok(body.problems.some((p: string) => p.startsWith(`revocation ocsp ${responder}: `)));
});
