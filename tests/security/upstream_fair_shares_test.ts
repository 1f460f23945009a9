/**
 * Attacks on what protects the core, which every TPP shares: one TPP's failing reads opening the
 * circuit for every TPP, one TPP's slow reads taking every upstream slot, and the catalogue cache
 * serving the answer to one client's Authorization to another. Each waits on the core's events
 * (a read arrived, a read released), never on the clock.
 */
import assert from "node:assert/strict";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { passthroughPolicy } from "../support/policies.ts";
import { startUpstream, type TestUpstream } from "../support/upstream.ts";
import { initiationHeaders, singlePayment } from "../support/requests.ts";
import { tokenIssuer } from "../support/tpp_tokens.ts";

const issuer = await tokenIssuer();
const TPP_A = "PSDGE-NBG-000001";
const TPP_B = "PSDGE-NBG-000002";
const TPP_C = "PSDGE-NBG-000003";

/** A core that creates payments, fails reads of `/accounts/broken-*` and holds `/accounts/slow`. */
function sharedCore() {
  let release!: () => void;
  const released = new Promise<void>((resolve) => release = resolve);
  let arrived!: () => void;
  const slowArrived = new Promise<void>((resolve) => arrived = resolve);
  const core = startUpstream(async (request) => {
    const path = new URL(request.url).pathname;
    if (request.method === "POST") {
      return Response.json({ transactionStatus: "RCVD", paymentId: "p-1" }, { status: 201 });
    }
    if (path.includes("/accounts/broken")) return new Response("stack trace", { status: 500 });
    if (path.endsWith("/accounts/slow")) {
      arrived();
      await released;
    }
    return Response.json({ account: {} });
  });
  return { core, release, slowArrived };
}

async function pay(gateway: TestGateway, tpp: string): Promise<number> {
  const response = await gateway.fetch("/v1/payments/sepa-credit-transfers", {
    method: "POST",
    headers: initiationHeaders({
      "x-request-id": crypto.randomUUID(),
      ...await issuer.headers(tpp),
    }),
    body: JSON.stringify(singlePayment()),
  });
  await response.body?.cancel();
  return response.status;
}

async function read(gateway: TestGateway, tpp: string, account: string): Promise<number> {
  const response = await gateway.fetch(`/v1/accounts/${account}`, {
    headers: {
      "x-request-id": crypto.randomUUID(),
      "consent-id": "c-1",
      ...await issuer.headers(tpp),
    },
  });
  await response.body?.cancel();
  return response.status;
}

function gatewayFor(core: TestUpstream, defaults: Record<string, unknown>) {
  return startGateway({
    policy: passthroughPolicy({ defaults: { bearer_token: issuer.options, ...defaults } }),
    upstream: core.url,
  });
}

Deno.test("upstreamCircuit() opens on the core's failure, not one TPP's: TPP A's failing reads leave TPP B's payment to the core", async () => {
  const { core } = sharedCore();
  await using _ = core;
  await using gateway = await gatewayFor(core, {
    upstream_circuit: { mode: "enforce", failures: 3, open_for: "1m" },
  });
  for (let i = 0; i < 3; i++) assert.equal(await read(gateway, TPP_A, "broken-a"), 500);
  assert.equal(await read(gateway, TPP_A, "broken-a"), 503, "A's own circuit is open");
  const reached = core.received.length;
  assert.equal(await pay(gateway, TPP_B), 201, "B's payment reaches the core");
  assert.equal(core.received.length, reached + 1);
  // A second TPP failing as well is the core failing: the circuit opens for every TPP.
  for (let i = 0; i < 3; i++) assert.equal(await read(gateway, TPP_B, "broken-b"), 500);
  assert.equal(await pay(gateway, TPP_C), 503, "the origin's circuit is open for C too");
  const opened = gateway.log.lines.filter((l) => l.msg === "circuit of one caller opened");
  assert.deepEqual(opened.map((l) => [l.caller, l.origin_opened]), [[TPP_A, false], [TPP_B, true]]);
  assert.equal(core.received.length, reached + 4, "C's payment never reached the core");
});

Deno.test("upstreamLimits() gives TPP A's slow reads at most its share of the slots: TPP B's payment gets one", async () => {
  const { core, release, slowArrived } = sharedCore();
  await using _ = core;
  await using gateway = await gatewayFor(core, {
    upstream_limits: { mode: "enforce", max_in_flight: 2, max_queue: 2, queue_timeout: "30s" },
  });
  const first = read(gateway, TPP_A, "slow");
  await slowArrived;
  // A's second read waits in the queue (its share is one slot and one place), its third is shed.
  const second = read(gateway, TPP_A, "slow");
  assert.equal(await read(gateway, TPP_A, "slow"), 503, "A's third read is past its share");
  assert.equal(await pay(gateway, TPP_B), 201, "B's payment takes the other slot at once");
  release();
  assert.deepEqual([await first, await second], [200, 200]);
});

Deno.test("catalogueCache() never serves the answer to one client's Authorization to another", async () => {
  await using core = startUpstream((request) =>
    Response.json({ for: request.headers.get("authorization") ?? "anyone" })
  );
  await using gateway = await startGateway({
    policy: passthroughPolicy({ groups: { products: { catalogue_cache: { ttl: "1m" } } } }),
    upstream: core.url,
  });
  const products = async (headers: Record<string, string>) =>
    await (await gateway.fetch("/v1/products/deposits", { headers })).json();
  assert.deepEqual(await products({ authorization: "Bearer of-A" }), { for: "Bearer of-A" });
  assert.deepEqual(await products({ authorization: "Bearer of-B" }), { for: "Bearer of-B" });
  assert.deepEqual(await products({}), { for: "anyone" });
  assert.deepEqual(await products({}), { for: "anyone" });
  assert.equal(core.received.length, 3, "only the answer to no credentials came from the cache");
});

Deno.test("catalogueCache() keys on the headers named in vary, and keeps no answer whose Vary names another", async () => {
  await using core = startUpstream((request) =>
    Response.json({
      segment: request.headers.get("x-customer-segment") ?? "anyone",
      channel: request.headers.get("x-channel") ?? "any",
    }, { headers: { vary: request.headers.has("x-channel") ? "X-Channel" : "X-Customer-Segment" } })
  );
  await using gateway = await startGateway({
    policy: passthroughPolicy({
      groups: {
        products: {
          proxy: { forward_headers: ["X-Customer-Segment", "X-Channel"], answer_headers: ["Vary"] },
          catalogue_cache: { ttl: "1m", vary: ["X-Customer-Segment"] },
        },
      },
    }),
    upstream: core.url,
  });
  const products = async (headers: Record<string, string>) =>
    await (await gateway.fetch("/v1/products/deposits", { headers })).json();
  const segment = (name: string) => ({ "x-customer-segment": name });
  assert.equal((await products(segment("private"))).segment, "private");
  assert.equal((await products(segment("business"))).segment, "business");
  assert.equal((await products(segment("private"))).segment, "private");
  assert.equal(core.received.length, 2, "the third from the cache, under its own segment");
  // The core varies on a header the key does not hold: its answers are not kept.
  assert.equal((await products({ "x-channel": "web" })).channel, "web");
  assert.equal((await products({ "x-channel": "app" })).channel, "app");
  assert.equal(core.received.length, 4);
});
