import assert from "node:assert/strict";
import { Hono } from "hono";
import {
  callerId,
  decide,
  decideAgain,
  keyPart,
  policyCallerId,
  slotTag,
  storeUnavailable,
  tppKey,
} from "../../middleware/_shared_state.ts";
import { operation } from "../../src/psd2/catalogue.ts";
import { identifiers, identifiersSection } from "../../src/psd2/identifiers.ts";
import type { GatewayContext, GatewayEnv } from "../../src/core/check.ts";
import { GatewayError } from "../../src/psd2/errors.ts";
import { RETRY_AFTER_SECONDS } from "../../src/psd2/retry_after.ts";
import type { Services } from "../../src/core/services.ts";
import { defaultServices } from "../../src/policy/services.ts";
import { memoryLogger } from "../../src/lib/log.ts";
import { MemoryStore } from "../../src/store/memory.ts";
import { type Decision, StoreUnavailableError, type Verdict } from "../../src/store/types.ts";
// In-process through the app's fetch (the upstream is still real HTTP); see tests/support/gateway.ts.
import { gatewayApp as startGateway } from "../support/gateway.ts";
import { startUpstream } from "../support/upstream.ts";
import { buildPolicy } from "../support/policies.ts";
import { idem, limit } from "../support/store_contract.ts";
import { LEASE_MS } from "../../src/store/leases.ts";

const POLICY = buildPolicy({
  defaults: {
    idempotency: { reads: "unique" },
    rate_limit: {
      limits: {
        per_tpp: { key: ["tpp"], limit: 100, window: "1m" },
        per_operation: { key: ["tpp", "operation"], limit: 50, window: "1m" },
      },
    },
    consent_frequency: { unknown_consent_limit: 10 },
  },
});

Deno.test("decide() asks the store once per request for idempotency, every limit and the consent counter", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({ policy: POLICY, upstream: upstream.url });
  const stats = gateway.store.stats;
  const before = stats.roundTrips;
  const response = await gateway.fetch("/v1/accounts/a1/balances", {
    headers: { "x-request-id": crypto.randomUUID(), "consent-id": "c-1" },
  });
  assert.equal(response.status, 200);
  await response.body?.cancel();
  assert.equal(response.headers.get("ratelimit-remaining"), "49", "both limits were counted");
  assert.equal(stats.roundTrips - before, 1);
});

/** Runs `fn` on a request context with the given variables set. */
async function inContext<T>(
  vars: { tpp?: string; clientAddress?: string },
  fn: (c: GatewayContext) => T,
): Promise<T> {
  const app = new Hono<GatewayEnv>();
  let result: T | undefined;
  app.get("/", (c) => {
    if (vars.tpp !== undefined) c.set("tpp", { id: vars.tpp, roles: [], domains: [] });
    if (vars.clientAddress !== undefined) c.set("clientAddress", vars.clientAddress);
    result = fn(c);
    return c.text("ok");
  });
  await app.request("/");
  return result as T;
}

Deno.test("callerId() is the TPP id, else ip:<client network>, else anonymous", async () => {
  const ids = identifiers();
  const caller = (c: GatewayContext) => callerId(c, ids);
  assert.equal(
    await inContext({ tpp: "PSDGE-NBG-1", clientAddress: "203.0.113.9" }, caller),
    "PSDGE-NBG-1",
  );
  assert.equal(await inContext({ clientAddress: "203.0.113.9" }, caller), "ip:203.0.113.9");
  assert.equal(
    await inContext({ clientAddress: "2001:db8:1:2:3:4:5:6" }, caller),
    "ip:2001:db8:1:2::/64",
    "an IPv6 client by its /64",
  );
  const by48 = identifiers(identifiersSection.parse({ ipv6_prefix: 48 }));
  assert.equal(
    await inContext({ clientAddress: "2001:db8:1:2:3:4:5:6" }, (c) => callerId(c, by48)),
    "ip:2001:db8:1::/48",
  );
  assert.equal(await inContext({ clientAddress: "" }, caller), "anonymous");
  // An empty TPP id is no identity.
  assert.equal(
    await inContext({ tpp: "", clientAddress: "203.0.113.9" }, caller),
    "ip:203.0.113.9",
  );
  assert.equal(policyCallerId("ip:2001:DB8:1:2::9", ids), "ip:2001:db8:1:2::/64");
  assert.equal(policyCallerId("PSDGE-NBG-1", ids), "PSDGE-NBG-1");
});

Deno.test("tppKey() and slotTag() key by the TPP, and callers without one share one tag", async () => {
  const tagged = { store: { tagKeys: true } } as unknown as Services;
  const untagged = { store: { tagKeys: false } } as unknown as Services;
  assert.equal(await inContext({ tpp: "PSD:GE/1", clientAddress: "" }, tppKey), "PSD%3AGE%2F1");
  assert.equal(await inContext({ clientAddress: "203.0.113.9" }, tppKey), "");
  assert.equal(await inContext({ tpp: "TPP 1" }, (c) => slotTag(c, tagged)), "{TPP%201}:");
  assert.equal(
    await inContext({ clientAddress: "203.0.113.9" }, (c) => slotTag(c, tagged)),
    "{-}:",
  );
  assert.equal(await inContext({ tpp: "TPP 1" }, (c) => slotTag(c, untagged)), "");
});

Deno.test("keyPart() never lets the separator through", () => {
  assert.equal(keyPart("a:b c"), "a%3Ab%20c");
});

Deno.test("storeUnavailable() throws 503 with Retry-After when closed, logs and counts when open", async () => {
  const log = memoryLogger();
  const services = defaultServices({ log });
  const closed = await inContext({}, (c) => {
    c.set("op", operation("getAccountList"));
    try {
      storeUnavailable(c, services, { check: "rate_limit", fail: "closed" });
    } catch (error) {
      return error;
    }
  }) as GatewayError;
  assert.ok(closed instanceof GatewayError);
  assert.equal(closed.status, 503);
  assert.equal(closed.code, "STORE_UNAVAILABLE");
  assert.equal(
    closed.message,
    "The gateway cannot check this request against its shared state now; retry later",
  );
  assert.deepEqual(closed.headers, { "retry-after": String(RETRY_AFTER_SECONDS.storeUnavailable) });
  assert.equal(services.store.stats.failOpen, 0);
  await inContext({}, (c) => {
    c.set("op", operation("getAccountList"));
    c.set("requestId", "");
    storeUnavailable(c, services, { check: "consent_frequency", fail: "open" });
  });
  assert.equal(services.store.stats.failOpen, 1);
  assert.deepEqual(log.lines.at(-1), {
    level: "error",
    msg: "store unavailable, request let through",
    check: "consent_frequency",
    op: "getAccountList",
    request_id: undefined,
  });
  await inContext({}, (c) => {
    c.set("op", operation("getAccountList"));
    c.set("requestId", "99391c7e-ad88-49ec-a2ad-99ddcb1f7721");
    storeUnavailable(c, services, { check: "consent_frequency", fail: "open" });
  });
  assert.equal(log.lines.at(-1)?.request_id, "99391c7e-ad88-49ec-a2ad-99ddcb1f7721");
  assert.equal(services.metrics.storeErrors.value({ check: "rate_limit" }), 1);
  assert.equal(services.metrics.storeErrors.value({ check: "consent_frequency" }), 2);
});

/** A memory store whose decide() answers through `answer` (the real verdict by default). */
class ScriptedAnswers extends MemoryStore {
  answer?: (decision: Decision) => Promise<Verdict>;
  override decide(decision: Decision): Promise<Verdict> {
    return this.answer ? this.answer(decision) : super.decide(decision);
  }
}

function storeServices() {
  const store = new ScriptedAnswers();
  const log = memoryLogger();
  return { store, log, services: defaultServices({ log, store }) };
}

Deno.test("decide() counts, logs and answers as an outage a verdict it does not understand", async () => {
  const { store, log, services } = storeServices();
  store.answer = () => Promise.resolve({ now: -1, blocked: false, limits: [] });
  const outcome = await inContext({}, (c) => decide(c, {}, services));
  assert.ok(outcome.error instanceof StoreUnavailableError);
  assert.equal(outcome.error.message, "The store answered with an unknown verdict: store clock -1");
  assert.equal(store.stats.errors, 1);
  assert.deepEqual(log.lines.at(-1), {
    level: "error",
    msg: "store verdict not understood",
    store: "memory",
    problem: "store clock -1",
  });
});

Deno.test("decide() answers a StoreUnavailableError as an outage and lets any other error through", async () => {
  const { store, services } = storeServices();
  const outage = new StoreUnavailableError("The store failed on decide: down");
  store.answer = () => Promise.reject(outage);
  const outcome = await inContext({}, (c) => decide(c, {}, services));
  assert.equal(outcome.error, outage);
  // A bug is no outage: it must not be let through as fail open (it becomes a 500).
  store.answer = () => Promise.reject(new TypeError("bug"));
  await assert.rejects(inContext({}, (c) => decide(c, {}, services)), TypeError);
});

Deno.test("decide() observes each store round trip in xs2a_store_duration_seconds", async () => {
  const { store, services } = storeServices();
  store.answer = async (decision) => {
    await new Promise((resolve) => setTimeout(resolve, 50));
    return await MemoryStore.prototype.decide.call(store, decision);
  };
  const started = performance.now();
  const outcome = await inContext({}, (c) => decide(c, {}, services));
  const elapsed = (performance.now() - started) / 1000;
  assert.equal(outcome.error, undefined);
  const { sum, count } = services.metrics.storeSeconds.series({});
  assert.equal(count, 1);
  // In seconds, the call's own time: at least the store's 50 ms, at most what the test saw.
  assert.ok(sum >= 0.045 && sum <= elapsed, `${sum} s observed, ${elapsed} s elapsed`);
});

Deno.test("decideAgain() asks again and keeps the new outcome for the checks that read it next", async () => {
  const { services } = storeServices();
  const [first, again, next] = await inContext({}, async (c) => {
    const first = await decide(c, {}, services);
    const again = await decideAgain(c, services);
    return [first, again, await decide(c, {}, services)];
  });
  assert.notEqual(again, first);
  assert.equal(next, again);
});

/** A plan of one wide limit that leases (and more parts), on a real memory store. */
function leasePlan(parts: Partial<Decision> = {}) {
  const wide = limit({ key: "rl:wide", limit: 100, windowMs: 60_000, burst: 100, want: 16 });
  return {
    limits: () => [wide, ...(parts.limits ?? [])],
    idempotency: parts.idempotency && (() => parts.idempotency),
  };
}

Deno.test("decide() serves a lease of a limit in-process, and asks the store when it is used up", async () => {
  const { store, services } = storeServices();
  const plan = leasePlan();
  const remaining = [];
  const trips = [];
  for (let i = 0; i < 17; i++) {
    const outcome = await inContext({}, (c) => decide(c, plan, services));
    remaining.push(outcome.verdict!.limits[0].remaining);
    trips.push(store.stats.roundTrips);
  }
  // 100 allowed: the store grants 16 and keeps 84; this gateway counts its 15 down, then asks.
  assert.deepEqual(remaining, Array.from({ length: 17 }, (_, i) => 99 - i));
  assert.deepEqual(trips, [1, ...Array(15).fill(1), 2]);
});

Deno.test("decide() gives a leased request back when another part refuses the request", async () => {
  const { store, services } = storeServices();
  const tight = limit({ key: "rl:tight", limit: 1, windowMs: 3_600_000, burst: 1 });
  const both = leasePlan({ limits: [tight] });
  const first = await inContext({}, (c) => decide(c, both, services));
  assert.equal(first.verdict!.blocked, false);
  assert.equal(first.verdict!.limits[0].remaining, 99);
  const refused = await inContext({}, (c) => decide(c, both, services));
  assert.equal(refused.verdict!.blocked, true, "the tight limit refuses");
  assert.equal(refused.verdict!.limits[1].allowed, false);
  // The request the tight limit refused used none of the lease: the next one is the second.
  const wideOnly = leasePlan();
  const next = await inContext({}, (c) => decide(c, wideOnly, services));
  assert.equal(next.verdict!.limits[0].remaining, 98);
  // A reused X-Request-ID stops the decision: nothing of the lease is used either.
  const claim = idem({ key: "idem:leased", mode: "unique" });
  const claimed = await inContext(
    {},
    (c) => decide(c, leasePlan({ idempotency: claim }), services),
  );
  assert.equal(claimed.verdict!.idempotency?.outcome, "claimed");
  assert.equal(claimed.verdict!.limits[0].remaining, 97);
  const reused = await inContext({}, (c) => decide(c, leasePlan({ idempotency: claim }), services));
  assert.equal(reused.verdict!.idempotency?.outcome, "duplicate");
  assert.deepEqual(reused.verdict!.limits, []);
  const after = await inContext({}, (c) => decide(c, wideOnly, services));
  assert.equal(after.verdict!.limits[0].remaining, 96);
  assert.equal(store.stats.roundTrips, 4, "the first, the refused, the claim and the reuse");
});

Deno.test("decide() lets a lease go after LEASE_MS: the next request asks the store", async () => {
  const { store, services } = storeServices();
  const plan = leasePlan();
  await inContext({}, (c) => decide(c, plan, services));
  await inContext({}, (c) => decide(c, plan, services));
  assert.equal(store.stats.roundTrips, 1);
  await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 50));
  const late = await inContext({}, (c) => decide(c, plan, services));
  assert.equal(store.stats.roundTrips, 2);
  // The 14 requests the lease still held are spent (the store counted them at the grant): 83
  // left, and what refilled in the second (100 a minute: one or two).
  const left = late.verdict!.limits[0].remaining;
  assert.ok(left >= 84 && left <= 85, String(left));
});
