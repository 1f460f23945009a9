/**
 * consent_scope on card accounts (1.3.11), the account tests' counterparts: a consent naming cards
 * by `maskedPan` grants the card reads it names and no other; the card account list is filtered
 * and teaches the gateway which card account id carries which masked PAN; ended consents, another
 * TPP's consent and `availableAccounts` are refused as for accounts; an account id is never taken
 * for a card account id.
 */
import assert from "node:assert/strict";
import { buildPolicy, type PolicyInput } from "../support/policies.ts";
import type { Mode } from "../../src/core/check.ts";
// In-process through the app's fetch (the upstream is still real HTTP); see tests/support/gateway.ts.
import { gatewayApp as startGateway, type TestGateway } from "../support/gateway.ts";
import { startUpstream } from "../support/upstream.ts";
import { storeSetup, WITHOUT_REDIS } from "../support/redis.ts";
import { tokenIssuer } from "../support/tpp_tokens.ts";
import { createConsentWith, recurringConsent } from "../support/consents.ts";

const PAN = ["525412******3241", "525412******7788", "403211******0042"];
const IBAN = "GE42SB0000000101904917";
const TOKEN = "metrics-token-for-tests";
const REPORT = "transactions?bookingStatus=booked&dateFrom=2026-01-01";
const issuer = await tokenIssuer();

/**
 * A core that enforces no consent scope: it creates consents (c-1, ...), reports the status
 * `statuses` holds for each, lists cards k1..k3 and one account k1 (the same id as a card), and
 * answers every other read with 200.
 */
function looseCore() {
  const consents = new Map<string, Record<string, unknown>>();
  const statuses = new Map<string, string>();
  const upstream = startUpstream((request, recorded) => {
    const path = new URL(request.url).pathname;
    if (request.method === "POST" && path === "/psd2/v1/consents") {
      const id = `c-${consents.size + 1}`;
      consents.set(id, JSON.parse(recorded.body));
      return Response.json({ consentStatus: "received", consentId: id }, { status: 201 });
    }
    const status = /^\/psd2\/v1\/consents\/([^/]+)\/status$/.exec(path);
    if (status) return Response.json({ consentStatus: statuses.get(status[1]) ?? "valid" });
    const consent = /^\/psd2\/v1\/consents\/([^/]+)$/.exec(path);
    if (consent && request.method === "DELETE") return new Response(null, { status: 204 });
    if (consent) {
      return Response.json({
        ...consents.get(consent[1]),
        consentStatus: statuses.get(consent[1]) ?? "valid",
      });
    }
    if (path === "/psd2/v1/card-accounts") {
      return Response.json({
        cardAccounts: PAN.map((maskedPan, i) => ({
          resourceId: `k${i + 1}`,
          maskedPan,
          currency: "GEL",
        })),
      });
    }
    if (path === "/psd2/v1/accounts") {
      return Response.json({ accounts: [{ resourceId: "k1", iban: IBAN, currency: "GEL" }] });
    }
    return Response.json({ balances: [] });
  });
  return { upstream, statuses };
}

function policy(
  store: PolicyInput = {},
  mode: Mode = "enforce",
  unknown: "forward" | "refuse" = "forward",
) {
  return buildPolicy({
    metrics: { token: TOKEN },
    defaults: {
      bearer_token: issuer.options,
      consent_scope: { mode, unknown_account: unknown },
    },
  }, store);
}

async function createConsent(
  gateway: TestGateway,
  access: Record<string, unknown>,
  tpp = "tpp-a",
): Promise<string> {
  return createConsentWith(gateway, {
    "content-type": "application/json",
    "psu-ip-address": "10.1.1.1",
    ...await issuer.headers(tpp),
  }, recurringConsent({ access }));
}

async function read(gateway: TestGateway, consent: string, path: string, tpp = "tpp-a") {
  const response = await gateway.fetch(path, {
    headers: {
      "x-request-id": crypto.randomUUID(),
      "consent-id": consent,
      "psu-ip-address": "10.1.1.1",
      ...await issuer.headers(tpp),
    },
  });
  const body = await response.json().catch(() => undefined);
  return { status: response.status, body };
}

/** The card account reads that reached the core. */
function coreReads(upstream: ReturnType<typeof startUpstream>): string[] {
  return upstream.received.filter((r) => r.path.startsWith("/psd2/v1/card-accounts"))
    .map((r) => r.path.split("?")[0]);
}

/** Runs `fn` on a gateway over the memory store and over Redis. */
function onEveryStore(
  name: string,
  fn: (gateway: TestGateway, core: ReturnType<typeof looseCore>) => Promise<void>,
  options: { mode?: Mode; unknown?: "forward" | "refuse" } = {},
) {
  for (const kind of ["memory", "redis"] as const) {
    Deno.test({
      name: `consentScope() ${name} (${kind})`,
      ignore: kind === "redis" && WITHOUT_REDIS,
      async fn() {
        await using store = await storeSetup(kind);
        const core = looseCore();
        await using _ = core.upstream;
        await using gateway = await startGateway({
          policy: policy(store.policy, options.mode, options.unknown),
          upstream: core.upstream.url,
          env: store.env,
        });
        await fn(gateway, core);
      },
    });
  }
}

onEveryStore(
  "filters the card account list and refuses reads of cards or services not granted",
  async (gateway, { upstream }) => {
    const consent = await createConsent(gateway, {
      accounts: [{ maskedPan: PAN[0] }],
      balances: [{ maskedPan: PAN[1] }],
    });
    const list = await read(gateway, consent, "/v1/card-accounts");
    assert.equal(list.status, 200);
    assert.deepEqual(list.body.cardAccounts.map((a: { resourceId: string }) => a.resourceId), [
      "k1",
      "k2",
    ]);
    const refused = [
      "/v1/card-accounts/k3", // not granted
      "/v1/card-accounts/k1/balances", // granted for accounts only
      `/v1/card-accounts/k1/${REPORT}`,
      `/v1/card-accounts/k2/${REPORT}`, // granted for balances only
    ];
    for (const path of refused) {
      const answer = await read(gateway, consent, path);
      assert.equal(answer.status, 401, path);
      assert.equal(answer.body.tppMessages[0].code, "CONSENT_INVALID");
      assert.match(answer.body.tppMessages[0].text, /card account "k[123]"/);
    }
    assert.equal((await read(gateway, consent, "/v1/card-accounts/k1")).status, 200);
    assert.equal((await read(gateway, consent, "/v1/card-accounts/k2/balances")).status, 200);
    assert.deepEqual(coreReads(upstream), [
      "/psd2/v1/card-accounts",
      "/psd2/v1/card-accounts/k1",
      "/psd2/v1/card-accounts/k2/balances",
    ]);
  },
);

onEveryStore(
  "places card account ids from the card list only, never from the account list",
  async (gateway, { upstream }) => {
    // The account list shows k1 with the IBAN the consent grants; the card k1 is another thing.
    const consent = await createConsent(gateway, { transactions: [{ iban: IBAN }] });
    assert.equal((await read(gateway, consent, "/v1/accounts")).status, 200);
    const unplaced = await read(gateway, consent, `/v1/card-accounts/k1/${REPORT}`);
    assert.equal(unplaced.status, 200, "not placed: forwarded, the core decides");
    const list = await read(gateway, consent, "/v1/card-accounts");
    assert.deepEqual(list.body.cardAccounts, [], "no card carries the IBAN");
    const placed = await read(gateway, consent, `/v1/card-accounts/k1/${REPORT}`);
    assert.equal(placed.status, 401, "placed by the card list: not granted");
    assert.equal(coreReads(upstream).length, 2);
  },
);

onEveryStore(
  "refuses a card read the card list has not placed, with unknown_account refuse",
  async (gateway, { upstream }) => {
    const consent = await createConsent(gateway, { transactions: [{ maskedPan: PAN[2] }] });
    const before = await read(gateway, consent, `/v1/card-accounts/k3/${REPORT}`);
    assert.equal(before.status, 401);
    assert.match(before.body.tppMessages[0].text, /GET \/v1\/card-accounts/);
    assert.equal((await read(gateway, consent, "/v1/card-accounts")).status, 200);
    assert.equal((await read(gateway, consent, `/v1/card-accounts/k3/${REPORT}`)).status, 200);
    assert.deepEqual(coreReads(upstream), [
      "/psd2/v1/card-accounts",
      "/psd2/v1/card-accounts/k3/transactions",
    ]);
  },
  { unknown: "refuse" },
);

onEveryStore(
  "refuses card reads on a consent the core reported as ended",
  async (gateway, { upstream, statuses }) => {
    for (const status of ["expired", "revokedByPsu", "terminatedByTpp", "rejected"]) {
      const consent = await createConsent(gateway, { allPsd2: "allAccounts" });
      assert.equal((await read(gateway, consent, "/v1/card-accounts/k1/balances")).status, 200);
      statuses.set(consent, status);
      assert.equal((await read(gateway, consent, `/v1/consents/${consent}/status`)).status, 200);
      const before = coreReads(upstream).length;
      const answer = await read(gateway, consent, "/v1/card-accounts/k1/balances");
      assert.equal(answer.status, 401, status);
      assert.equal(answer.body.tppMessages[0].code, "CONSENT_INVALID");
      assert.match(answer.body.tppMessages[0].text, new RegExp(`status "${status}"`));
      assert.equal((await read(gateway, consent, "/v1/card-accounts")).status, 401);
      assert.equal(coreReads(upstream).length, before);
    }
  },
);

onEveryStore("refuses card reads on a consent of another TPP", async (gateway, { upstream }) => {
  const consent = await createConsent(gateway, { allPsd2: "allAccounts" }, "tpp-a");
  const other = await read(gateway, consent, `/v1/card-accounts/k1/${REPORT}`, "tpp-b");
  assert.equal(other.status, 401);
  assert.match(other.body.tppMessages[0].text, /another TPP/);
  assert.equal((await read(gateway, consent, "/v1/card-accounts", "tpp-b")).status, 401);
  assert.deepEqual(coreReads(upstream), []);
  assert.equal((await read(gateway, consent, `/v1/card-accounts/k1/${REPORT}`)).status, 200);
});

onEveryStore(
  "grants the card list but no card read on an availableAccounts consent",
  async (gateway, { upstream }) => {
    const consent = await createConsent(gateway, { availableAccounts: "allAccounts" });
    const list = await read(gateway, consent, "/v1/card-accounts");
    assert.equal(list.body.cardAccounts.length, 3);
    assert.equal((await read(gateway, consent, "/v1/card-accounts/k1")).status, 401);
    assert.deepEqual(coreReads(upstream), ["/psd2/v1/card-accounts"]);
  },
);

onEveryStore(
  "forwards a card read on a consent it never saw and counts it as unknown",
  async (gateway, { upstream }) => {
    assert.equal(
      (await read(gateway, "never-seen", "/v1/card-accounts/k3/balances")).status,
      200,
    );
    assert.deepEqual(coreReads(upstream), ["/psd2/v1/card-accounts/k3/balances"]);
    const metrics = await (await gateway.fetch("/metrics", {
      headers: { authorization: `Bearer ${TOKEN}` },
    })).text();
    assert.match(
      metrics,
      /xs2a_consent_scope_total\{op="getCardAccountBalances",result="unknown"\} 1/,
    );
  },
);

onEveryStore(
  "in report mode forwards and logs the card reads and list members it would have refused",
  async (gateway, { upstream }) => {
    const consent = await createConsent(gateway, { accounts: [{ maskedPan: PAN[0] }] });
    const list = await read(gateway, consent, "/v1/card-accounts");
    assert.equal(list.body.cardAccounts.length, 3);
    assert.equal((await read(gateway, consent, "/v1/card-accounts/k1/balances")).status, 200);
    assert.equal(coreReads(upstream).length, 2);
    const findings = gateway.log.lines.flatMap((l) =>
      (l.findings as { check: string; code: string }[] | undefined) ?? []
    ).filter((f) => f.check === "consent_scope");
    assert.equal(findings.length, 2);
    assert.ok(findings.every((f) => f.code === "CONSENT_INVALID"));
  },
  { mode: "report" },
);
