/**
 * Attacks by an id's spelling, against a core that compares ids without regard to case (as Java's
 * equalsIgnoreCase and Postgres citext do): an out-of-consent account read in upper case, a
 * used-up frequencyPerDay escaped by the account id's or the consent id's case, an X-Request-ID
 * resent in upper case, a per-PSU limit escaped by the PSU-ID's case, and a per-client limit
 * escaped by taking a new IPv6 address from the same /64. Each decision keys on the id's
 * canonical form (src/psd2/identifiers.ts).
 */
import assert from "node:assert/strict";
import type { TestGateway } from "../support/gateway.ts";
import { type LevelInput, passthroughPolicy, type PolicyInput } from "../support/policies.ts";
import { startUpstream, type TestUpstream } from "../support/upstream.ts";
import { initiationHeaders, singlePayment } from "../support/requests.ts";
import { onEachStoreGateway } from "../support/each_store.ts";
import { tokenIssuer } from "../support/tpp_tokens.ts";
import { createConsentWith, recurringConsent } from "../support/consents.ts";

const issuer = await tokenIssuer();
const TPP = "PSDGE-NBG-000001";
const IBANS = ["GE42SB0000000101904917", "GE15SB0000000101904918", "GE85SB0000000101904919"];

/**
 * A core that takes ids in any case for the same resource: consents `Consent-<n>` (not UUIDs),
 * accounts a1..a3, a new payment for every initiation it executes, and every read served.
 */
function carelessCore(): TestUpstream {
  let consents = 0;
  return startUpstream((request) => {
    const path = new URL(request.url).pathname.toLowerCase();
    if (request.method === "POST" && path === "/psd2/v1/consents") {
      consents++;
      return Response.json({ consentStatus: "valid", consentId: `Consent-${consents}` }, {
        status: 201,
      });
    }
    if (request.method === "POST") {
      return Response.json({ transactionStatus: "RCVD", paymentId: crypto.randomUUID() }, {
        status: 201,
      });
    }
    if (path === "/psd2/v1/accounts") {
      return Response.json({
        accounts: IBANS.map((iban, i) => ({ resourceId: `a${i + 1}`, iban, currency: "GEL" })),
      });
    }
    return Response.json({ balances: [] });
  });
}

/** Registers a test on the memory store and on Redis, with `defaults` over a passthrough policy. */
function onEachStore(
  title: string,
  setup: { defaults: LevelInput; sections?: PolicyInput },
  fn: (gateway: TestGateway, core: TestUpstream) => Promise<void>,
) {
  onEachStoreGateway(title, {
    core: carelessCore,
    policy: passthroughPolicy(setup.sections ?? {}, {
      defaults: { bearer_token: issuer.options, ...setup.defaults },
    }),
  }, fn);
}

async function createConsent(gateway: TestGateway, body: Record<string, unknown>) {
  return createConsentWith(
    gateway,
    initiationHeaders(await issuer.headers(TPP)),
    recurringConsent(body),
  );
}

/** A TPP-initiated read (no PSU-IP-Address) with the consent. */
async function read(gateway: TestGateway, path: string, headers: Record<string, string> = {}) {
  const response = await gateway.fetch(path, {
    headers: { "x-request-id": crypto.randomUUID(), ...await issuer.headers(TPP), ...headers },
  });
  const body = await response.json().catch(() => undefined);
  return { status: response.status, code: body?.tppMessages?.[0]?.code };
}

function coreSaw(core: TestUpstream, path: string): number {
  return core.received.filter((r) => r.path.toLowerCase() === path.toLowerCase()).length;
}

onEachStore(
  "consentScope() refuses an account outside the consent read by its id in upper case",
  { defaults: { consent_scope: { mode: "enforce" } } },
  async (gateway, core) => {
    const consent = await createConsent(gateway, { access: { accounts: [{ iban: IBANS[0] }] } });
    assert.equal((await read(gateway, "/v1/accounts", { "consent-id": consent })).status, 200);
    assert.equal((await read(gateway, "/v1/accounts/a3", { "consent-id": consent })).status, 401);
    const upper = await read(gateway, "/v1/accounts/A3", { "consent-id": consent });
    assert.equal(upper.status, 401, "A3 is a3 to the core");
    assert.equal(upper.code, "CONSENT_INVALID");
    const both = await read(gateway, "/v1/accounts/A3", { "consent-id": consent.toUpperCase() });
    assert.equal(both.status, 401, "and the consent id in upper case too");
    assert.equal(coreSaw(core, "/psd2/v1/accounts/a3"), 0, "the core never served it");
    assert.equal((await read(gateway, "/v1/accounts/A1", { "consent-id": consent })).status, 200);
  },
);

onEachStore(
  "consentFrequency() counts a read in any case of the account id and the consent id as one",
  { defaults: { consent_frequency: { mode: "enforce", max_per_day: 4 } } },
  async (gateway, core) => {
    const consent = await createConsent(gateway, {
      access: { balances: [{ iban: IBANS[0] }] },
      frequencyPerDay: 2,
    });
    const reads = [
      await read(gateway, "/v1/accounts/a1/balances", { "consent-id": consent }),
      await read(gateway, "/v1/accounts/a1/balances", { "consent-id": consent }),
      await read(gateway, "/v1/accounts/A1/balances", { "consent-id": consent }),
      await read(gateway, "/v1/accounts/a1/balances", { "consent-id": consent.toUpperCase() }),
      await read(gateway, "/v1/accounts/A1/balances", { "consent-id": consent.toLowerCase() }),
    ];
    assert.deepEqual(reads.map((r) => r.status), [200, 200, 429, 429, 429]);
    assert.equal(reads[2].code, "ACCESS_EXCEEDED");
    assert.equal(coreSaw(core, "/psd2/v1/accounts/a1/balances"), 2);
  },
);

async function pay(gateway: TestGateway, id: string) {
  const response = await gateway.fetch("/v1/payments/sepa-credit-transfers", {
    method: "POST",
    headers: initiationHeaders({ "x-request-id": id, ...await issuer.headers(TPP) }),
    body: JSON.stringify(singlePayment()),
  });
  return {
    status: response.status,
    replay: response.headers.get("x-idempotent-replay"),
    body: await response.json(),
  };
}

onEachStore(
  "idempotency() replays a payment whose X-Request-ID is resent in upper case, never runs it again",
  { defaults: { idempotency: { mode: "enforce", writes: "replay" } } },
  async (gateway, core) => {
    const id = crypto.randomUUID();
    const first = await pay(gateway, id);
    assert.equal(first.status, 201);
    const upper = await pay(gateway, id.toUpperCase());
    assert.equal(upper.replay, "true", JSON.stringify(upper.body));
    assert.equal(upper.body.paymentId, first.body.paymentId);
    assert.equal(core.received.length, 1, "the core executed the payment once");
  },
);

onEachStore(
  "rateLimit() counts a PSU-ID in any case against one PSU",
  {
    defaults: {
      rate_limit: {
        mode: "enforce",
        limits: { per_psu: { key: ["tpp", "psu_id"], limit: 2, window: "1m" } },
      },
    },
  },
  async (gateway) => {
    const statuses = [];
    for (const psu of ["alice", "Alice", "ALICE", "aLiCe"]) {
      statuses.push((await read(gateway, "/v1/accounts", { "psu-id": psu })).status);
    }
    assert.deepEqual(statuses, [200, 200, 429, 429]);
    assert.equal((await read(gateway, "/v1/accounts", { "psu-id": "bob" })).status, 200);
  },
);

onEachStore(
  "rateLimit() counts an IPv6 client by its /64, whatever address of it each request comes from",
  {
    defaults: {
      bearer_token: { mode: "off" },
      rate_limit: {
        mode: "enforce",
        limits: {
          per_client: { key: ["client_ip"], limit: 2, window: "1m" },
          per_caller: { key: ["tpp"], limit: 3, window: "1m" },
        },
      },
    },
  },
  async (gateway) => {
    const from = async (address: string) => (await gateway.fetch("/v1/accounts", {
      headers: { "x-request-id": crypto.randomUUID(), "x-forwarded-for": address },
    }).then(async (r) => (await r.body?.cancel(), r.status)));
    assert.deepEqual(
      [
        await from("2001:db8:1:2::1"),
        await from("2001:db8:1:2::2"),
        await from("2001:DB8:1:2:ffff:ffff:ffff:ffff"),
      ],
      [200, 200, 429],
    );
    assert.equal(await from("2001:db8:1:3::1"), 200, "another /64 is another client");
    assert.equal(await from("192.0.2.1"), 200);
    assert.equal(await from("192.0.2.2"), 200, "an IPv4 client by its whole address");
  },
);

onEachStore(
  "rateLimit() counts an IPv6 client by the prefix the policy gives",
  {
    defaults: {
      bearer_token: { mode: "off" },
      rate_limit: {
        mode: "enforce",
        limits: { per_caller: { key: ["tpp"], limit: 1, window: "1m" } },
      },
    },
    sections: { identifiers: { ipv6_prefix: 48 } },
  },
  async (gateway) => {
    const from = async (address: string) => (await gateway.fetch("/v1/accounts", {
      headers: { "x-request-id": crypto.randomUUID(), "x-forwarded-for": address },
    }).then(async (r) => (await r.body?.cancel(), r.status)));
    assert.deepEqual([await from("2001:db8:1:2::1"), await from("2001:db8:1:ff::1")], [200, 429]);
    assert.equal(await from("2001:db8:2::1"), 200);
  },
);
