import assert from "node:assert/strict";
import { buildPolicy, type PolicyInput } from "../support/policies.ts";
import type { Mode } from "../../src/core/check.ts";
// In-process through the app's fetch (the upstream is still real HTTP); see tests/support/gateway.ts.
import { gatewayApp as startGateway, type TestGateway } from "../support/gateway.ts";
import { startUpstream } from "../support/upstream.ts";
import { storeSetup, WITHOUT_REDIS } from "../support/redis.ts";
import { tokenIssuer } from "../support/tpp_tokens.ts";
import { createConsentWith, recurringConsent } from "../support/consents.ts";

const IBAN = ["GE42SB0000000101904917", "GE15SB0000000101904918", "GE85SB0000000101904919"];
const TOKEN = "metrics-token-for-tests";
const issuer = await tokenIssuer();

/**
 * A core that enforces no consent scope at all: it creates consents (c-1, c-2, ...), reports the
 * status `statuses` holds for each, and answers every account read with 200.
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
    if (path === "/psd2/v1/accounts") {
      return Response.json({
        accounts: IBAN.map((iban, i) => ({ resourceId: `a${i + 1}`, iban, currency: "GEL" })),
      });
    }
    return Response.json({ balances: [] });
  });
  return { upstream, statuses };
}

function policy(store: PolicyInput = {}, mode: Mode = "enforce") {
  return buildPolicy({
    metrics: { token: TOKEN },
    defaults: { bearer_token: issuer.options, consent_scope: { mode } },
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

/** The account reads that reached the core (GET under /psd2/v1/accounts). */
function coreReads(upstream: ReturnType<typeof startUpstream>): string[] {
  return upstream.received.filter((r) => r.path.startsWith("/psd2/v1/accounts")).map((r) => r.path);
}

/** Runs `fn` on a gateway over the memory store and over Redis. */
function onEveryStore(
  name: string,
  fn: (gateway: TestGateway, core: ReturnType<typeof looseCore>) => Promise<void>,
  mode: Mode = "enforce",
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
          policy: policy(store.policy, mode),
          upstream: core.upstream.url,
          env: store.env,
        });
        await fn(gateway, core);
      },
    });
  }
}

onEveryStore(
  "filters the account list and refuses reads of accounts or services not granted",
  async (gateway, { upstream }) => {
    const consent = await createConsent(gateway, {
      accounts: [{ iban: IBAN[0] }],
      balances: [{ iban: IBAN[1] }],
    });
    const list = await read(gateway, consent, "/v1/accounts");
    assert.equal(list.status, 200);
    assert.deepEqual(list.body.accounts.map((a: { resourceId: string }) => a.resourceId), [
      "a1",
      "a2",
    ]);
    const refused = [
      "/v1/accounts/a3", // not granted
      "/v1/accounts/a1/balances", // granted for accounts only
      "/v1/accounts/a1/transactions?bookingStatus=booked&dateFrom=2026-01-01",
      "/v1/accounts/a2/transactions?bookingStatus=booked&dateFrom=2026-01-01", // granted for balances only
    ];
    for (const path of refused) {
      const answer = await read(gateway, consent, path);
      assert.equal(answer.status, 401, path);
      assert.equal(answer.body.tppMessages[0].code, "CONSENT_INVALID");
    }
    assert.equal((await read(gateway, consent, "/v1/accounts/a1")).status, 200);
    assert.equal((await read(gateway, consent, "/v1/accounts/a2/balances")).status, 200);
    assert.deepEqual(coreReads(upstream), [
      "/psd2/v1/accounts",
      "/psd2/v1/accounts/a1",
      "/psd2/v1/accounts/a2/balances",
    ]);
  },
);

onEveryStore(
  "refuses a consent the core reported as ended",
  async (gateway, { upstream, statuses }) => {
    for (const status of ["expired", "revokedByPsu", "terminatedByTpp", "rejected"]) {
      const consent = await createConsent(gateway, { allPsd2: "allAccounts" });
      assert.equal((await read(gateway, consent, "/v1/accounts/a1/balances")).status, 200);
      statuses.set(consent, status);
      assert.equal((await read(gateway, consent, `/v1/consents/${consent}/status`)).status, 200);
      const before = coreReads(upstream).length;
      const answer = await read(gateway, consent, "/v1/accounts/a1/balances");
      assert.equal(answer.status, 401, status);
      assert.equal(answer.body.tppMessages[0].code, "CONSENT_INVALID");
      assert.match(answer.body.tppMessages[0].text, new RegExp(`status "${status}"`));
      assert.equal(coreReads(upstream).length, before);
    }
    // Deleted by the TPP: terminatedByTpp.
    const deleted = await createConsent(gateway, { allPsd2: "allAccounts" });
    const gone = await gateway.fetch(`/v1/consents/${deleted}`, {
      method: "DELETE",
      headers: { "x-request-id": crypto.randomUUID(), ...await issuer.headers("tpp-a") },
    });
    assert.equal(gone.status, 204);
    assert.equal((await read(gateway, deleted, "/v1/accounts")).status, 401);
  },
);

onEveryStore("refuses a consent of another TPP", async (gateway, { upstream }) => {
  const consent = await createConsent(gateway, { allPsd2: "allAccounts" }, "tpp-a");
  const other = await read(
    gateway,
    consent,
    "/v1/accounts/a1/transactions?bookingStatus=booked&dateFrom=2026-01-01",
    "tpp-b",
  );
  assert.equal(other.status, 401);
  assert.match(other.body.tppMessages[0].text, /another TPP/);
  assert.equal((await read(gateway, consent, "/v1/accounts", "tpp-b")).status, 401);
  assert.deepEqual(coreReads(upstream), []);
  assert.equal(
    (await read(
      gateway,
      consent,
      "/v1/accounts/a1/transactions?bookingStatus=booked&dateFrom=2026-01-01",
      "tpp-a",
    ))
      .status,
    200,
  );
});

onEveryStore(
  "grants no account read on an availableAccounts consent",
  async (gateway, { upstream }) => {
    const consent = await createConsent(gateway, { availableAccounts: "allAccounts" });
    const list = await read(gateway, consent, "/v1/accounts");
    assert.equal(list.body.accounts.length, 3);
    assert.equal((await read(gateway, consent, "/v1/accounts/a1")).status, 401);
    assert.deepEqual(coreReads(upstream), ["/psd2/v1/accounts"]);
  },
);

onEveryStore(
  "forwards a consent it never saw and counts it as unknown",
  async (gateway, { upstream }) => {
    assert.equal((await read(gateway, "never-seen", "/v1/accounts/a3/balances")).status, 200);
    assert.deepEqual(coreReads(upstream), ["/psd2/v1/accounts/a3/balances"]);
    const metrics = await (await gateway.fetch("/metrics", {
      headers: { authorization: `Bearer ${TOKEN}` },
    })).text();
    assert.match(metrics, /xs2a_consent_scope_total\{op="getBalances",result="unknown"\} 1/);
  },
);

onEveryStore(
  "in report mode forwards and logs what it would have refused or removed",
  async (gateway, { upstream }) => {
    const consent = await createConsent(gateway, { accounts: [{ iban: IBAN[0] }] });
    const list = await read(gateway, consent, "/v1/accounts");
    assert.equal(list.body.accounts.length, 3);
    assert.equal((await read(gateway, consent, "/v1/accounts/a1/balances")).status, 200);
    assert.equal(coreReads(upstream).length, 2);
    const findings = gateway.log.lines.flatMap((l) =>
      (l.findings as { check: string; code: string }[] | undefined) ?? []
    ).filter((f) => f.check === "consent_scope");
    assert.equal(findings.length, 2);
    assert.ok(findings.every((f) => f.code === "CONSENT_INVALID"));
  },
  "report",
);
