import assert from "node:assert/strict";
import { tokenIssuer } from "../support/tpp_tokens.ts";
// In-process through the app's fetch (the upstream is still real HTTP); see tests/support/gateway.ts.
import { gatewayApp as startGateway, type TestGateway } from "../support/gateway.ts";
import { closedPort, startUpstream } from "../support/upstream.ts";
import { redisClient, startRedisServer, storeSetup, WITHOUT_REDIS } from "../support/redis.ts";
import { MemoryStore } from "../../src/store/memory.ts";
import { rateLimit } from "../../middleware/rate_limit.ts";
import { operation } from "../../src/psd2/catalogue.ts";
import { createMetrics } from "../../src/lib/metrics.ts";
import { buildContext } from "../support/sections.ts";
import { buildPolicy, type LevelInput, type PolicyInput } from "../support/policies.ts";
import { initiationHeaders, singlePayment } from "../support/requests.ts";

type RateLimitOptions = NonNullable<LevelInput["rate_limit"]>;

/** A policy with these rate limits and rate_limit options, and the parts over it. */
function policy(
  limits: RateLimitOptions["limits"],
  options: RateLimitOptions = {},
  ...parts: PolicyInput[]
) {
  return buildPolicy({ defaults: { rate_limit: { ...options, limits } } }, ...parts);
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
    policy: policy({ per_tpp: { key: ["tpp"], limit: 3, window: "1m" } }),
    upstream: upstream.url,
  });
  // GCRA: each request moves the full refill 20 s (a minute / 3) further away.
  for (const [remaining, reset] of [["2", "20"], ["1", "40"], ["0", "60"]]) {
    const response = await read(gateway);
    assert.equal(response.status, 200);
    await response.body?.cancel();
    assert.equal(response.headers.get("ratelimit-limit"), "3");
    assert.equal(response.headers.get("ratelimit-remaining"), remaining);
    assert.equal(response.headers.get("ratelimit-reset"), reset);
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
    policy: policy({
      per_tpp: { key: ["tpp"], limit: 3, window: "1h" },
      per_psu: { key: ["psu_id"], limit: 1, window: "1h" },
    }),
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
      { per_client: { key: ["client_ip", "operation"], limit: 1, window: "1h" } },
      { client_ip_header: "X-Real-IP" },
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

Deno.test("rateLimit() counts by the last value of client_ip_header", async () => {
  // A client may send its own X-Forwarded-For; the terminator appends the address it saw.
  await using upstream = startUpstream();
  await using gateway = await startGateway({
    policy: policy(
      { per_client: { key: ["client_ip"], limit: 1, window: "1h" } },
      { client_ip_header: "X-Forwarded-For" },
    ),
    upstream: upstream.url,
  });
  const from = (value: string) => read(gateway, { "x-forwarded-for": value });
  assert.deepEqual(
    await statuses([() => from("6.6.6.1, 10.0.0.1"), () => from("6.6.6.2, 10.0.0.1")]),
    [200, 429],
    "a forged first value does not give a new counter",
  );
  assert.deepEqual(await statuses([() => from("10.0.0.1, 10.0.0.2")]), [200]);
  assert.deepEqual(
    await statuses([
      () => from("10.0.0.3"),
      () => from("6.6.6.1 ,  10.0.0.3"),
      () => from("10.0.0.13"),
    ]),
    [200, 429, 200],
    "the value without spaces around it, compared whole",
  );
  const without = await read(gateway);
  assert.equal(without.status, 200, "no header: not counted by this limit");
  await without.body?.cancel();
});

Deno.test("rateLimit() counts by the connection's address without client_ip_header", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({
    policy: policy({ per_client: { key: ["client_ip"], limit: 1, window: "1h" } }),
    upstream: upstream.url,
  });
  assert.deepEqual(await statuses([() => read(gateway), () => read(gateway)]), [200, 429]);
});

Deno.test("rateLimit() counts a missing PSU-ID as the caller's unknown PSU, and keeps the parts of a key apart", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({
    policy: policy({ per_psu_consent: { key: ["psu_id", "consent"], limit: 1, window: "1h" } }),
    upstream: upstream.url,
  });
  assert.deepEqual(
    await statuses([() => read(gateway), () => read(gateway)]),
    [200, 429],
    "no PSU-ID: one unknown PSU of this caller, never uncounted (issue 18 item 8)",
  );
  const as = (psu: string, consent: string) => () =>
    read(gateway, { "psu-id": psu, "consent-id": consent });
  assert.deepEqual(
    await statuses([as("a", "bc"), as("ab", "c"), as("a", "bc")]),
    [200, 200, 429],
    "PSU a with consent bc is not PSU ab with consent c",
  );
});

Deno.test("rateLimit() counts its decisions in xs2a_rate_limit_decisions_total by outcome", async () => {
  await using upstream = startUpstream();
  const metrics = createMetrics();
  await using gateway = await startGateway({
    policy: policy({ per_tpp: { key: ["tpp"], limit: 2, window: "1h" } }),
    upstream: upstream.url,
    services: { metrics },
  });
  assert.deepEqual(
    await statuses([() => read(gateway), () => read(gateway), () => read(gateway)]),
    [
      200,
      200,
      429,
    ],
  );
  const text = metrics.render();
  assert.match(text, /^xs2a_rate_limit_decisions_total\{outcome="allowed"\} 2$/m);
  assert.match(text, /^xs2a_rate_limit_decisions_total\{outcome="rejected"\} 1$/m);
});

Deno.test("rateLimit() builds nothing without limits", () => {
  const build = (limits: Record<string, unknown>) =>
    rateLimit.create(
      rateLimit.options.parse({ limits }),
      buildContext(operation("getAccountList")),
    );
  assert.equal(build({}), undefined);
  assert.notEqual(build({ per_tpp: { limit: 1, window: "1h" } }), undefined);
});

Deno.test("rateLimit() refuses limit and tier names that are not snake_case", async () => {
  await using upstream = startUpstream();
  await assert.rejects(
    startGateway({
      policy: policy({ PerTpp: { key: ["tpp"], limit: 1, window: "1h" } }),
      upstream: upstream.url,
    }),
    /defaults\.rate_limit\.limits\.PerTpp: Invalid key/,
  );
  await assert.rejects(
    startGateway({
      policy: policy(
        { per_tpp: { key: ["tpp"], limit: 1, window: "1h" } },
        { tpps: { "TPP-1": "Gold" } },
      ),
      upstream: upstream.url,
    }),
    /defaults\.rate_limit\.tpps\.TPP-1: a name in snake_case/,
  );
});

Deno.test("rateLimit() in report mode still lets the request's other parts through: its X-Request-ID is kept for replay", async () => {
  await using upstream = startUpstream(() => Response.json({ paymentId: "p-1" }, { status: 201 }));
  // Replay is for an identified TPP (a caller without one gets 400 for a reused id).
  const issuer = await tokenIssuer();
  const tpp = await issuer.headers("PSDGE-NBG-123456");
  await using gateway = await startGateway({
    policy: policy({ per_tpp: { key: ["tpp"], limit: 1, window: "1h" } }, { mode: "report" }, {
      defaults: { bearer_token: issuer.options },
    }),
    upstream: upstream.url,
  });
  const pay = (id: string) =>
    gateway.fetch("/v1/payments/domestic", {
      method: "POST",
      headers: {
        ...tpp,
        "x-request-id": id,
        "content-type": "application/json",
        "psu-ip-address": "192.168.8.78",
      },
      body: JSON.stringify({
        debtorAccount: { iban: "GE29NB0000000101904917" },
        instructedAmount: { currency: "GEL", amount: "12.50" },
        creditorAccount: { iban: "GE60NB0000000123456789" },
        creditorName: "Merchant",
      }),
    });
  assert.equal((await pay(crypto.randomUUID())).status, 201);
  const id = crypto.randomUUID();
  const over = await pay(id);
  assert.equal(over.status, 201, "over the limit, reported, forwarded");
  await over.body?.cancel();
  const again = await pay(id);
  await again.body?.cancel();
  assert.equal(again.headers.get("x-idempotent-replay"), "true");
  assert.equal(upstream.received.length, 2);
});

Deno.test("rateLimit() adds no RateLimit headers to a request a later check refused (nothing was counted)", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({
    policy: policy({ per_tpp: { key: ["tpp"], limit: 5, window: "1h" } }, {}, {
      defaults: { consent_frequency: { unknown_consent_limit: 1 } },
    }),
    upstream: upstream.url,
  });
  const first = await read(gateway, { "consent-id": "never-seen" });
  await first.body?.cancel();
  assert.equal(first.headers.get("ratelimit-remaining"), "4");
  const refused = await read(gateway, { "consent-id": "never-seen" });
  assert.equal(refused.status, 429);
  assert.equal((await refused.json()).tppMessages[0].path, "Consent-ID");
  assert.equal(refused.headers.get("ratelimit-limit"), null);
  assert.equal(refused.headers.get("ratelimit-remaining"), null);
  const next = await read(gateway, { "consent-id": "other" });
  await next.body?.cancel();
  assert.equal(next.headers.get("ratelimit-remaining"), "3", "the refused request used nothing");
});

Deno.test("rateLimit() answers with the longest wait when several limits reject at once", async () => {
  await using upstream = startUpstream();
  const minute = { per_minute: { key: ["tpp"], limit: 1, window: "1m" } };
  const hour = { per_hour: { key: ["tpp"], limit: 1, window: "1h" } };
  const second = { per_second: { key: ["tpp"], limit: 1, window: "10s" } };
  // The longest wait in the middle, and first: the answer does not depend on the order.
  for (const limits of [[minute, hour, second], [hour, minute, second]]) {
    await using gateway = await startGateway({
      policy: policy(Object.assign({}, ...limits)),
      upstream: upstream.url,
    });
    assert.deepEqual(await statuses([() => read(gateway)]), [200]);
    const limited = await read(gateway);
    assert.equal(limited.status, 429);
    const retry = Number(limited.headers.get("retry-after"));
    assert.ok(retry > 3000 && retry <= 3600, `Retry-After ${retry}: the hour's wait`);
    assert.equal(limited.headers.get("ratelimit-limit"), "1");
    assert.equal(limited.headers.get("ratelimit-reset"), "3600");
    assert.match((await limited.json()).tppMessages[0].text, /limit "per_hour" allows 1 per 1h/);
  }
});

Deno.test("rateLimit() names the first of two limits that reject with the same wait", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({
    policy: policy({
      hourly: { key: ["tpp"], limit: 1, window: "1h" },
      two_hourly: { key: ["tpp"], limit: 2, window: "2h", burst: 1 },
    }),
    upstream: upstream.url,
  });
  assert.deepEqual(await statuses([() => read(gateway)]), [200]);
  const limited = await read(gateway);
  assert.equal(limited.headers.get("retry-after"), "3600");
  assert.match((await limited.json()).tppMessages[0].text, /limit "hourly" allows 1 per 1h/);
});

Deno.test("rateLimit() gives a forwarded request the RateLimit headers of the limit with the least left", async () => {
  await using upstream = startUpstream();
  const cases: [RateLimitOptions["limits"], string, string][] = [
    [
      {
        wide: { key: ["tpp"], limit: 5, window: "1m" },
        narrow: { key: ["tpp"], limit: 2, window: "1h" },
      },
      "2",
      "1",
    ],
    [
      {
        narrow: { key: ["tpp"], limit: 2, window: "1h" },
        wide: { key: ["tpp"], limit: 5, window: "1m" },
      },
      "2",
      "1",
    ],
    // Equal room left: the first of them.
    [
      {
        three: { key: ["tpp"], limit: 3, window: "1m" },
        five: { key: ["tpp"], limit: 5, window: "1h", burst: 3 },
      },
      "3",
      "2",
    ],
  ];
  for (const [limits, limit, remaining] of cases) {
    await using gateway = await startGateway({ policy: policy(limits), upstream: upstream.url });
    const response = await read(gateway);
    await response.body?.cancel();
    assert.equal(response.headers.get("ratelimit-limit"), limit, JSON.stringify(limits));
    assert.equal(response.headers.get("ratelimit-remaining"), remaining, JSON.stringify(limits));
  }
});

Deno.test("rateLimit() applies a caller's tier", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({
    policy: policy(
      { per_tpp: { key: ["tpp"], limit: 1, window: "1h" } },
      { tiers: { gold: { per_tpp: { limit: 3 } } }, tpps: { "ip:127.0.0.1": "gold" } },
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

Deno.test("rateLimit() lets a burst through at once, then refills at the limit's pace", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({
    policy: policy({ per_tpp: { key: ["tpp"], limit: 1, window: "1h", burst: 3 } }),
    upstream: upstream.url,
  });
  const four = Array.from({ length: 4 }, () => () => read(gateway));
  assert.deepEqual(await statuses(four), [200, 200, 200, 429], "burst 3");
  const limited = await read(gateway);
  assert.equal(limited.headers.get("ratelimit-limit"), "1");
  assert.equal(limited.headers.get("retry-after"), "3600", "one request per hour refills");
  await limited.body?.cancel();
});

Deno.test("rateLimit() tier overrides: a limit without burst allows that many at once, a window of its own", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({
    policy: policy(
      { per_tpp: { key: ["tpp"], limit: 1, window: "1h", burst: 5 } },
      {
        tiers: { small: { per_tpp: { limit: 2, window: "1d" } } },
        tpps: { "ip:127.0.0.1": "small" },
      },
    ),
    upstream: upstream.url,
  });
  const three = Array.from({ length: 3 }, () => () => read(gateway));
  assert.deepEqual(await statuses(three), [200, 200, 429], "the tier's limit 2 is its burst");
  const limited = await read(gateway);
  assert.equal(limited.headers.get("retry-after"), "43200", "2 per day: one every 12 h");
  assert.match((await limited.json()).tppMessages[0].text, /allows 2 per 1d; retry in 43200 s/);
});

Deno.test("rateLimit() counts a consent by Consent-ID or by the consent in the path", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({
    policy: policy({ per_consent: { key: ["consent"], limit: 2, window: "1h" } }),
    upstream: upstream.url,
  });
  const byHeader = (consent: string) => () => read(gateway, { "consent-id": consent });
  const byPath = (consent: string) => () =>
    gateway.fetch(`/v1/consents/${consent}/status`, {
      headers: { "x-request-id": crypto.randomUUID() },
    });
  assert.deepEqual(
    await statuses([byHeader("c-1"), byPath("c-1"), byHeader("c-1"), byPath("c-2")]),
    [200, 200, 429, 200],
  );
});

Deno.test("rateLimit() names the window of the limit in its 429 text", async () => {
  await using upstream = startUpstream();
  for (
    const [window, text] of [
      ["1d", "1d"],
      ["2h", "2h"],
      ["90s", "90s"],
      ["90m", "90m"],
      ["1500ms", "1500ms"],
    ]
  ) {
    await using gateway = await startGateway({
      policy: policy({ per_tpp: { key: ["tpp"], limit: 1, window } }),
      upstream: upstream.url,
    });
    await (await read(gateway)).body?.cancel();
    const limited = await read(gateway);
    assert.equal(limited.status, 429, window);
    assert.match((await limited.json()).tppMessages[0].text, new RegExp(`allows 1 per ${text};`));
  }
});

Deno.test("rateLimit() in report mode forwards over the limit and records the finding", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({
    policy: policy({ per_tpp: { key: ["tpp"], limit: 1, window: "1h" } }, { mode: "report" }),
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
        { per_tpp: { key: ["tpp"], limit: 1, window: "1h" } },
        { tpps: { "TPP-1": "gold" } },
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
        policy: policy({ per_tpp: { key: ["tpp"], limit: 10, window: "1h" } }, {}, store.policy),
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

for (const kind of ["redis", "upstash"] as const) {
  Deno.test({
    name:
      `rateLimit() on a shared store leases requests to each instance, never beyond the limit (${kind})`,
    ignore: WITHOUT_REDIS,
    async fn() {
      await using redis = await startRedisServer();
      await using store = await storeSetup(kind, { url: redis.url });
      await using upstream = startUpstream();
      // 2 a second refill (a lease of 2 at most), 40 at once.
      const limits: RateLimitOptions["limits"] = {
        per_tpp: { key: ["tpp"], limit: 120, window: "1m", burst: 40 },
      };
      // The limit alone decides a read: no consent counter.
      const alone = { defaults: { consent_frequency: { mode: "off" as const } } };
      const options = {
        policy: policy(limits, {}, store.policy, alone),
        upstream: upstream.url,
        env: store.env,
      };
      await using one = await startGateway(options);
      await using two = await startGateway(options);
      const started = Date.now();
      const all = await concurrent(
        Array.from({ length: 100 }, (_, i) => () => read(i % 2 ? one : two)),
      );
      const refilled = Math.floor((Date.now() - started) / 500);
      const passed = all.filter((s) => s === 200).length;
      // Never more than the limit allows; at most one lease (of 2) per instance left unused.
      assert.ok(passed <= 40 + refilled, `${passed} passed`);
      assert.ok(passed >= 40 - 2, `${passed} passed`);
      assert.equal(upstream.received.length, passed);

      // A limit refilling 10 a second: one instance counts its lease down, exact to the TPP.
      const fast: RateLimitOptions["limits"] = { fast: { key: ["tpp"], limit: 600, window: "1m" } };
      await using three = await startGateway({
        ...options,
        policy: policy(fast, {}, store.policy, alone),
      });
      const client = await redisClient(redis.url);
      const decisions = async () => {
        const stats = await client.info("commandstats");
        return [...stats.matchAll(/^cmdstat_eval(?:sha)?:calls=(\d+)/gm)]
          .reduce((sum, [, calls]) => sum + Number(calls), 0);
      };
      const before = await decisions();
      const shown = [];
      for (let i = 0; i < 10; i++) {
        const response = await read(three);
        await response.body?.cancel();
        shown.push(Number(response.headers.get("ratelimit-remaining")));
      }
      assert.deepEqual(shown, Array.from({ length: 10 }, (_, i) => 599 - i));
      assert.equal(await decisions() - before, 1, "a lease of 10: one decision on Redis");
      await client.quit();
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
      policy: policy({ per_tpp: { key: ["tpp"], limit: 2, window: "1h" } }, {}, store.policy),
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
        { per_tpp: { key: ["tpp"], limit: 2, window: "1h" } },
        { fail: "closed" },
        store.policy,
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
    policy: policy({ per_tpp: { key: ["tpp"], limit: 5, window: "1m" } }, {}, {
      defaults: { consent_id: { max_length: 4 } },
    }),
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
    policy: policy({ per_tpp: { key: ["tpp"], limit: 5, window: "1m" } }),
    upstream: `http://127.0.0.1:${closedPort()}`,
  });
  const late = await read(unreachable, { "x-request-id": id });
  await late.body?.cancel();
  assert.equal(late.status, 503);
  assert.equal(late.headers.get("ratelimit-remaining"), "4");
  assert.equal(late.headers.get("x-request-id"), id);
});

Deno.test("rateLimit() refuses a limit that does not count by tpp on a store whose keys need a slot tag", () => {
  const build = (limits: Record<string, unknown>, tagKeys: boolean) => {
    const context = buildContext(operation("getAccountList"));
    context.services.store = Object.assign(new MemoryStore(), { tagKeys });
    return rateLimit.create(rateLimit.options.parse({ limits }), context);
  };
  const perTpp = { per_tpp: { key: ["tpp", "client_ip"], limit: 1, window: "1h" } };
  const perIp = { per_ip: { key: ["client_ip", "operation"], limit: 1, window: "1h" } };
  assert.notEqual(build(perTpp, true), undefined);
  assert.notEqual(build(perIp, false), undefined);
  assert.throws(
    () => build({ ...perTpp, ...perIp }, true),
    {
      message:
        "rate_limit.limits.per_ip: key [client_ip, operation] does not count by tpp, which a Redis Cluster store needs (one decision's keys share the caller's slot): add tpp to the key, or put a hash tag in store.prefix (\"{xs2a}:\") to keep every key in one slot",
    },
  );
});

Deno.test("rateLimit() does not count a request that lacks a part of the limit's key", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({
    policy: policy({ per_consent: { key: ["tpp", "consent"], limit: 1, window: "1h" } }),
    upstream: upstream.url,
  });
  // A payment initiation without Consent-ID has no consent to count by (its caller it has).
  const pay = () =>
    gateway.fetch("/v1/payments/domestic", {
      method: "POST",
      headers: initiationHeaders({ "x-request-id": crypto.randomUUID() }),
      body: JSON.stringify(singlePayment()),
    });
  for (let i = 0; i < 2; i++) {
    const response = await pay();
    await response.body?.cancel();
    assert.equal(response.status, 200, `payment ${i + 1}`);
    assert.equal(response.headers.get("ratelimit-limit"), null);
  }
  assert.equal(upstream.received.length, 2);
});

Deno.test("rateLimit() gives each caller an unknown PSU of its own", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({
    policy: policy({ per_psu: { key: ["psu_id"], limit: 1, window: "1h" } }),
    upstream: upstream.url,
  });
  // Behind the loopback terminator, X-Forwarded-For names the caller (ip:<address>).
  const from = (ip: string) => () => read(gateway, { "x-forwarded-for": ip });
  assert.deepEqual(
    await statuses([from("10.0.0.1"), from("10.0.0.2"), from("10.0.0.1")]),
    [200, 200, 429],
  );
});
