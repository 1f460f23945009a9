/**
 * Attacks on a bounded store's room: a flood of other keys (rate-limit counters of distinct
 * PSU-IDs) must not push out what the gateway decided (a consent's scope, its day counters), and
 * a caller that fills the store must be the one refused, not every TPP. Run on the memory store
 * (bounded here to 60 entries, 30 a caller) and on Redis (whose memory is the server's: nothing is evicted
 * under `noeviction`, see docs/shared_state.md).
 */
import assert from "node:assert/strict";
import type { TestGateway } from "../support/gateway.ts";
import { passthroughPolicy, type PolicyInput } from "../support/policies.ts";
import { startUpstream, type TestUpstream } from "../support/upstream.ts";
import { initiationHeaders, singlePayment } from "../support/requests.ts";
import { gatewayOn, onEachStore, type StoreKind } from "../support/each_store.ts";
import { tokenIssuer } from "../support/tpp_tokens.ts";

const issuer = await tokenIssuer();
const TPP_A = "PSDGE-NBG-000001";
const TPP_B = "PSDGE-NBG-000002";
const NEXT_YEAR = `${new Date().getUTCFullYear() + 1}-12-31`;
const ACCOUNTS = [
  { resourceId: "a1", iban: "GE42SB0000000101904917", currency: "GEL" },
  { resourceId: "a2", iban: "GE42SB0000000101904918", currency: "GEL" },
];

/** Registers `title` on a memory store of 60 entries (30 a caller) and on Redis; `fn` gets the gateway. */
function onBoundedStores(
  title: string,
  setup: { core: () => TestUpstream; policy: PolicyInput },
  fn: (gateway: TestGateway, core: TestUpstream, kind: StoreKind) => Promise<void>,
) {
  onEachStore(title, async (store, kind) => {
    // Half of the store for each caller here (the default is a quarter).
    const bounded = kind === "memory"
      ? { store: { kind: "memory", max_entries: 60, owner_share: 0.5 } }
      : {};
    await using core = setup.core();
    await using gateway = await gatewayOn(store, core, passthroughPolicy(bounded, setup.policy));
    await fn(gateway, core, kind);
  });
}

/** A core that serves every account read whatever the consent grants, and creates payments. */
function looseCore(): TestUpstream {
  let consents = 0;
  return startUpstream((request) => {
    const path = new URL(request.url).pathname;
    if (request.method === "POST" && path === "/psd2/v1/consents") {
      consents++;
      return Response.json({ consentStatus: "valid", consentId: `c-${consents}` }, { status: 201 });
    }
    if (request.method === "POST") {
      return Response.json({ transactionStatus: "RCVD", paymentId: crypto.randomUUID() }, {
        status: 201,
      });
    }
    if (path === "/psd2/v1/accounts") return Response.json({ accounts: ACCOUNTS });
    if (path.endsWith("/status")) return Response.json({ consentStatus: "valid" });
    return Response.json({ account: {} });
  });
}

async function get(gateway: TestGateway, path: string, headers: Record<string, string>) {
  const response = await gateway.fetch(path, {
    headers: { "x-request-id": crypto.randomUUID(), ...headers },
  });
  const body = await response.json();
  return { status: response.status, code: body.tppMessages?.[0]?.code as string | undefined };
}

onBoundedStores(
  "A flood of 120 PSU-IDs' rate-limit counters pushes out neither a consent's scope nor its used-up day counter",
  {
    core: looseCore,
    policy: {
      defaults: {
        bearer_token: issuer.options,
        consent_scope: { mode: "enforce" },
        consent_frequency: { mode: "enforce", time_zone: "Asia/Tbilisi", max_per_day: 4 },
        rate_limit: {
          mode: "enforce",
          limits: { per_psu: { key: ["psu_id"], limit: 1000, window: "1m" } },
        },
      },
    },
  },
  async (gateway, core) => {
    const tpp = await issuer.headers(TPP_A);
    const created = await gateway.fetch("/v1/consents", {
      method: "POST",
      headers: initiationHeaders({ "x-request-id": crypto.randomUUID(), ...tpp }),
      body: JSON.stringify({
        access: { accounts: [{ iban: ACCOUNTS[0].iban }] },
        recurringIndicator: false,
        frequencyPerDay: 1,
        validUntil: NEXT_YEAR,
        combinedServiceIndicator: false,
      }),
    });
    assert.equal(created.status, 201);
    const consent = (await created.json()).consentId as string;
    const reads = { ...tpp, "consent-id": consent };
    assert.equal((await get(gateway, "/v1/accounts", reads)).status, 200);
    assert.equal((await get(gateway, "/v1/accounts/a1", reads)).status, 200, "its one read");
    assert.equal((await get(gateway, "/v1/accounts/a2", reads)).status, 401, "not granted");

    const flood: number[] = [];
    for (let i = 0; i < 120; i++) {
      const psu = { ...tpp, "psu-id": `psu-${i}` };
      flood.push((await get(gateway, `/v1/consents/${consent}/status`, psu)).status);
    }
    assert.deepEqual([...new Set(flood)], [200], "rate-limit counters make room for each other");

    const outside = await get(gateway, "/v1/accounts/a2", reads);
    assert.equal(outside.status, 401, "the scope is still known: an out-of-consent read");
    assert.equal(outside.code, "CONSENT_INVALID");
    const again = await get(gateway, "/v1/accounts/a1", reads);
    assert.equal(again.status, 429, "the day counter is still known: a used-up read");
    assert.equal(again.code, "ACCESS_EXCEEDED");
    const served = core.received.filter((r) => r.path.startsWith("/psd2/v1/accounts/"));
    assert.deepEqual(served.map((r) => r.path), ["/psd2/v1/accounts/a1"]);
  },
);

onBoundedStores(
  "80 anonymous payments against a store of 60 entries refuse the anonymous caller, not TPP B",
  {
    core: looseCore,
    policy: {
      defaults: {
        // Report mode: a request without a token goes on as an anonymous caller (ip:127.0.0.1).
        bearer_token: { ...issuer.options, mode: "report" },
        idempotency: { mode: "enforce", fail: "closed", wait: "50ms", poll: "10ms" },
      },
    },
  },
  async (gateway, core, kind) => {
    const pay = async (headers: Record<string, string>) =>
      (await gateway.fetch("/v1/payments/sepa-credit-transfers", {
        method: "POST",
        headers: initiationHeaders({ "x-request-id": crypto.randomUUID(), ...headers }),
        body: JSON.stringify(singlePayment()),
      })).status;
    const flood: number[] = [];
    for (let i = 0; i < 80; i++) flood.push(await pay({}));
    if (kind === "memory") {
      const refused = flood.filter((status) => status === 503).length;
      assert.equal(refused, 80 - 30, "anonymous payments refused past the caller's 30 entries");
    }
    const before = core.received.length;
    assert.equal(await pay(await issuer.headers(TPP_B)), 201, "TPP B's payment");
    assert.equal(core.received.length, before + 1, "reached the core");
    assert.equal(await pay(await issuer.headers(TPP_A)), 201, "and TPP A's");
  },
);
