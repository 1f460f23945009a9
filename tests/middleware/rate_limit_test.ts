import assert from "node:assert/strict";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { closedPort, startUpstream } from "../support/upstream.ts";
import { startRedisServer, storeSetup, WITHOUT_REDIS } from "../support/redis.ts";
import { MemoryStore } from "../../src/store/memory.ts";

function policy(limits: string, store = "", extra = "") {
  return `
upstream:
  url: \${UPSTREAM_URL}
${store}
defaults:
  rate_limit:
${extra}
    limits:
${limits}
`;
}

function read(gateway: TestGateway, headers: Record<string, string> = {}) {
  return gateway.fetch("/v1/accounts", {
    headers: { "x-request-id": crypto.randomUUID(), "consent-id": "c-1", ...headers },
  });
}

/** Sends requests one after the other; the statuses in order. */
async function statuses(calls: (() => Promise<Response>)[]): Promise<number[]> {
  const responses = [];
  for (const call of calls) responses.push(await call());
  return await settle(responses);
}

/** Sends requests at once; the statuses in the order of the calls. */
async function concurrent(calls: (() => Promise<Response>)[]): Promise<number[]> {
  return await settle(await Promise.all(calls.map((call) => call())));
}

async function settle(responses: Response[]): Promise<number[]> {
  const settled = await Promise.all(responses);
  await Promise.all(settled.map((r) => r.body?.cancel()));
  return settled.map((r) => r.status);
}

Deno.test("rateLimit() lets the limit through with RateLimit headers, then answers 429 ACCESS_EXCEEDED", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({
    policy: policy("      per_tpp: { key: [tpp], limit: 3, window: 1m }"),
    upstream: upstream.url,
  });
  for (const remaining of ["2", "1", "0"]) {
    const response = await read(gateway);
    assert.equal(response.status, 200);
    await response.body?.cancel();
    assert.equal(response.headers.get("ratelimit-limit"), "3");
    assert.equal(response.headers.get("ratelimit-remaining"), remaining);
    assert.ok(Number(response.headers.get("ratelimit-reset")) > 0);
  }
  const limited = await read(gateway);
  assert.equal(limited.status, 429);
  assert.deepEqual((await limited.json()).tppMessages, [{
    category: "ERROR",
    code: "ACCESS_EXCEEDED",
    text: 'Too many requests: limit "per_tpp" allows 3 per 1m; retry in 20 s',
  }]);
  assert.equal(limited.headers.get("retry-after"), "20");
  assert.equal(limited.headers.get("ratelimit-limit"), "3");
  assert.equal(limited.headers.get("ratelimit-remaining"), "0");
  assert.equal(limited.headers.get("ratelimit-reset"), "60");
  assert.equal(upstream.received.length, 3, "the rejected request never reached the upstream");
});

Deno.test("rateLimit() does not count rejected requests against other limits", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({
    policy: policy(`      per_tpp: { key: [tpp], limit: 3, window: 1h }
      per_psu: { key: [psu_id], limit: 1, window: 1h }`),
    upstream: upstream.url,
  });
  const psu = (id: string) => read(gateway, { "psu-id": id });
  assert.deepEqual(await statuses([() => psu("alice")]), [200]);
  assert.deepEqual(await statuses([() => psu("alice"), () => psu("alice"), () => psu("alice")]), [
    429,
    429,
    429,
  ]);
  assert.deepEqual(
    await statuses([() => psu("bob"), () => psu("carol")]),
    [200, 200],
    "per_tpp has room left",
  );
  assert.deepEqual(await statuses([() => psu("dave")]), [429], "per_tpp is now used up");
  assert.equal(upstream.received.length, 3);
});

Deno.test("rateLimit() counts by the configured key and skips requests without it", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({
    policy: policy(
      "      per_client: { key: [client_ip, operation], limit: 1, window: 1h }",
      "",
      "    client_ip_header: X-Real-IP",
    ),
    upstream: upstream.url,
  });
  const from = (ip: string) => read(gateway, { "x-real-ip": ip });
  assert.deepEqual(
    await statuses([() => from("10.0.0.1"), () => from("10.0.0.1"), () => from("10.0.0.2")]),
    [
      200,
      429,
      200,
    ],
  );
  // Without X-Real-IP the client is the connection's peer (127.0.0.1, a terminator by default):
  // it has a counter of its own, and its second read is over the limit.
  assert.deepEqual(await statuses([() => read(gateway), () => read(gateway)]), [200, 429]);
  // Another operation has its own counter (operation is part of the key).
  const balances = await gateway.fetch("/v1/accounts/a1/balances", {
    headers: { "x-request-id": crypto.randomUUID(), "consent-id": "c-1", "x-real-ip": "10.0.0.1" },
  });
  assert.equal(balances.status, 200);
  await balances.body?.cancel();
});

Deno.test("rateLimit() applies a caller's tier", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({
    policy: policy(
      "      per_tpp: { key: [tpp], limit: 1, window: 1h }",
      "",
      '    tiers:\n      gold: { per_tpp: { limit: 3 } }\n    tpps:\n      "ip:127.0.0.1": gold',
    ),
    upstream: upstream.url,
  });
  assert.deepEqual(
    await statuses([
      () => read(gateway),
      () => read(gateway),
      () => read(gateway),
      () => read(gateway),
    ]),
    [
      200,
      200,
      200,
      429,
    ],
  );
});

Deno.test("rateLimit() in report mode forwards over the limit and records the finding", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({
    policy: policy("      per_tpp: { key: [tpp], limit: 1, window: 1h }", "", "    mode: report"),
    upstream: upstream.url,
  });
  assert.deepEqual(await statuses([() => read(gateway), () => read(gateway)]), [200, 200]);
  assert.deepEqual(findings(gateway), [
    { check: "rate_limit", mode: "report", code: "ACCESS_EXCEEDED" },
  ]);
});

Deno.test("rateLimit() refuses a tier that is not defined", async () => {
  await using upstream = startUpstream();
  await assert.rejects(
    startGateway({
      policy: policy(
        "      per_tpp: { key: [tpp], limit: 1, window: 1h }",
        "",
        "    tpps: { TPP-1: gold }",
      ),
      upstream: upstream.url,
    }),
    /tpps.TPP-1: tier "gold" is not defined in tiers/,
  );
});

for (const kind of ["memory", "redis", "upstash"] as const) {
  Deno.test({
    name: `rateLimit() enforces one limit exactly across two gateway instances (${kind})`,
    ignore: kind !== "memory" && WITHOUT_REDIS,
    async fn() {
      await using store = await storeSetup(kind);
      await using upstream = startUpstream();
      const services = kind === "memory" ? { store: new MemoryStore() } : undefined;
      const options = {
        policy: policy("      per_tpp: { key: [tpp], limit: 10, window: 1h }", store.yaml),
        upstream: upstream.url,
        env: store.env,
        services,
      };
      await using one = await startGateway(options);
      await using two = await startGateway(options);
      const all = await concurrent(
        Array.from({ length: 30 }, (_, i) => () => read(i % 2 ? one : two)),
      );
      assert.equal(all.filter((s) => s === 200).length, 10);
      assert.equal(all.filter((s) => s === 429).length, 20);
      assert.equal(upstream.received.length, 10);
      // Sequentially too: the 11th request, whichever instance gets it, is rejected.
      assert.deepEqual(await statuses([() => read(one)]), [429]);
      assert.deepEqual(await statuses([() => read(two)]), [429]);
    },
  });
}

Deno.test({
  name: "rateLimit() with the default fail: open forwards while Redis is down, then counts again",
  ignore: WITHOUT_REDIS,
  async fn() {
    await using redis = await startRedisServer();
    await using store = await storeSetup("redis", { url: redis.url, timeoutMs: 300 });
    await using upstream = startUpstream();
    await using gateway = await startGateway({
      policy: policy("      per_tpp: { key: [tpp], limit: 2, window: 1h }", store.yaml),
      upstream: upstream.url,
      env: store.env,
    });
    assert.deepEqual(
      await statuses([() => read(gateway), () => read(gateway), () => read(gateway)]),
      [
        200,
        200,
        429,
      ],
    );
    await redis.kill();
    const down = await read(gateway);
    assert.equal(down.status, 200, "fail open: not an authentication error, not a 500");
    assert.equal(down.headers.get("ratelimit-limit"), null);
    await down.body?.cancel();
    assert.ok(gateway.store.stats.failOpen >= 1);
    await redis.start();
    // The restarted Redis is empty: counting starts again, on the store.
    const end = Date.now() + 10_000;
    let limited = false;
    while (!limited && Date.now() < end) {
      limited = (await statuses([() => read(gateway)]))[0] === 429;
    }
    assert.ok(limited, "the limit applies again after the restart");
  },
});

Deno.test({
  name: "rateLimit() with fail: closed answers 503 STORE_UNAVAILABLE while Redis is down",
  ignore: WITHOUT_REDIS,
  async fn() {
    await using redis = await startRedisServer();
    await using store = await storeSetup("redis", { url: redis.url, timeoutMs: 300 });
    await using upstream = startUpstream();
    await using gateway = await startGateway({
      policy: policy(
        "      per_tpp: { key: [tpp], limit: 2, window: 1h }",
        store.yaml,
        "    fail: closed",
      ),
      upstream: upstream.url,
      env: store.env,
    });
    await redis.kill();
    const down = await read(gateway);
    assert.equal(down.status, 503);
    assert.equal(down.headers.get("retry-after"), "2");
    assert.equal((await down.json()).tppMessages[0].code, "STORE_UNAVAILABLE");
    assert.equal(upstream.received.length, 0);
  },
});

/** The findings of the last request that had any: check, mode and code. */
function findings(gateway: TestGateway) {
  const line = gateway.log.lines.findLast((l) => l.findings);
  return (line?.findings as { check: string; mode: string; code: string }[] | undefined)
    ?.map(({ check, mode, code }) => ({ check, mode, code }));
}

Deno.test("rateLimit() headers replace the upstream's own and reach the errors of later checks", async () => {
  // A core that sends headers of the same names: the client must see the gateway's, once. (The
  // core echoes the request's X-Request-ID in its own spelling: another id would be refused.)
  await using upstream = startUpstream((request) =>
    Response.json({}, {
      headers: {
        "ratelimit-limit": "999",
        "x-request-id": request.headers.get("x-request-id")!.toUpperCase(),
      },
    })
  );
  await using gateway = await startGateway({
    policy: policy("      per_tpp: { key: [tpp], limit: 5, window: 1m }") +
      "  consent_id:\n    max_length: 4\n",
    upstream: upstream.url,
  });
  const id = crypto.randomUUID();
  const passed = await gateway.fetch("/v1/accounts", {
    headers: { "x-request-id": id, "consent-id": "c-1" },
  });
  await passed.body?.cancel();
  assert.equal(passed.status, 200);
  assert.equal(passed.headers.get("ratelimit-limit"), "5");
  assert.equal(passed.headers.get("x-request-id"), id);
  // consent_id runs before rate_limit: its rejection has no rate-limit headers, only the echo.
  const early = await gateway.fetch("/v1/accounts", {
    headers: { "x-request-id": id, "consent-id": "too-long" },
  });
  await early.body?.cancel();
  assert.equal(early.status, 400);
  assert.equal(early.headers.get("ratelimit-limit"), null);
  assert.equal(early.headers.get("x-request-id"), id);
  // The proxy runs after rate_limit: its 503 for an unreachable core carries both.
  await using unreachable = await startGateway({
    policy: policy("      per_tpp: { key: [tpp], limit: 5, window: 1m }"),
    upstream: `http://127.0.0.1:${closedPort()}`,
  });
  const late = await read(unreachable, { "x-request-id": id });
  await late.body?.cancel();
  assert.equal(late.status, 503);
  assert.equal(late.headers.get("ratelimit-remaining"), "4");
  assert.equal(late.headers.get("x-request-id"), id);
});
