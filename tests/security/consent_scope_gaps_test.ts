/**
 * Attacks on the gaps of the consent scope, against a core that enforces no scope at all: an
 * account read before the account list was read (the gateway cannot place the account id), and a
 * consent that names an account by another reference than its IBAN (a card's maskedPan, a BBAN),
 * which must grant only the account that carries that reference, never every account.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import type { TestGateway } from "../support/gateway.ts";
import type { LevelInput } from "../support/policies.ts";
import { startUpstream, type TestUpstream } from "../support/upstream.ts";
import { initiationHeaders } from "../support/requests.ts";
import { onEachStoreGateway } from "../support/each_store.ts";
import { tokenIssuer } from "../support/tpp_tokens.ts";
import { createConsentWith, recurringConsent } from "../support/consents.ts";

const issuer = await tokenIssuer();
const TPP = "PSDGE-NBG-000001";

/** The PSU's accounts as the core lists them: one by IBAN, one by BBAN only, one card account. */
const ACCOUNTS = [
  { resourceId: "a1", iban: "GE42SB0000000101904917", currency: "GEL" },
  { resourceId: "a2", bban: "0000000101904918", currency: "GEL" },
  { resourceId: "a3", maskedPan: "525412******3241", currency: "GEL" },
  { resourceId: "a4", currency: "GEL" }, // no reference the gateway can place
];

/** A core that serves every account read whatever the consent grants. */
function looseCore(): TestUpstream {
  let consents = 0;
  return startUpstream((request) => {
    const path = new URL(request.url).pathname;
    if (request.method === "POST") {
      consents++;
      return Response.json({ consentStatus: "valid", consentId: `c-${consents}` }, { status: 201 });
    }
    if (path === "/psd2/v1/accounts") return Response.json({ accounts: ACCOUNTS });
    return Response.json({ balances: [] });
  });
}

function onEachStore(
  title: string,
  consentScope: LevelInput["consent_scope"],
  fn: (gateway: TestGateway, core: TestUpstream) => Promise<void>,
) {
  onEachStoreGateway(title, {
    core: looseCore,
    policy: { defaults: { bearer_token: issuer.options, consent_scope: consentScope } },
  }, fn);
}

async function createConsent(gateway: TestGateway, access: Record<string, unknown>) {
  return createConsentWith(
    gateway,
    initiationHeaders(await issuer.headers(TPP)),
    recurringConsent({ access }),
  );
}

async function read(gateway: TestGateway, consent: string, path: string) {
  const response = await gateway.fetch(path, {
    headers: {
      "x-request-id": crypto.randomUUID(),
      "consent-id": consent,
      ...await issuer.headers(TPP),
    },
  });
  const body = await response.json();
  return { status: response.status, body, code: body.tppMessages?.[0]?.code };
}

/** The account reads that reached the core, past the account list. */
function accountReads(core: TestUpstream): string[] {
  return core.received.map((r) => r.path).filter((p) => p.startsWith("/psd2/v1/accounts/"));
}

onEachStore(
  "consentScope() with unknown_account: refuse refuses an account read before the list was read",
  { mode: "enforce", unknown_account: "refuse" },
  async (gateway, core) => {
    const consent = await createConsent(gateway, { accounts: [{ iban: ACCOUNTS[0].iban }] });
    for (const account of ["a1", "a2"]) {
      const early = await read(gateway, consent, `/v1/accounts/${account}`);
      assert.equal(early.status, 401, account);
      assert.equal(early.code, "CONSENT_INVALID");
      assert.match(early.body.tppMessages[0].text, /read the account list/);
    }
    assert.deepEqual(accountReads(core), [], "nothing reached the core before the list");
    assert.equal((await read(gateway, consent, "/v1/accounts")).status, 200);
    assert.equal((await read(gateway, consent, "/v1/accounts/a1")).status, 200);
    assert.equal((await read(gateway, consent, "/v1/accounts/a2")).status, 401, "not granted");
    const unplaced = await read(gateway, consent, "/v1/accounts/a4");
    assert.equal(unplaced.status, 401, "an account the list shows without a reference");
    assert.match(unplaced.body.tppMessages[0].text, /not known/);
    assert.deepEqual(accountReads(core), ["/psd2/v1/accounts/a1"]);
  },
);

onEachStore(
  "consentScope() grants a maskedPan consent no account that does not carry that maskedPan",
  { mode: "enforce" },
  async (gateway, core) => {
    const consent = await createConsent(gateway, {
      accounts: [{ maskedPan: "525412******3241" }],
    });
    const list = await read(gateway, consent, "/v1/accounts");
    assert.equal(list.status, 200);
    assert.deepEqual(list.body.accounts.map((a: { resourceId: string }) => a.resourceId), ["a3"]);
    for (const account of ["a1", "a2"]) {
      const answer = await read(gateway, consent, `/v1/accounts/${account}`);
      assert.equal(answer.status, 401, account);
      assert.equal(answer.code, "CONSENT_INVALID");
    }
    assert.equal((await read(gateway, consent, "/v1/accounts/a3")).status, 200);
    assert.equal((await read(gateway, consent, "/v1/accounts/a3/balances")).status, 401);
    assert.deepEqual(accountReads(core), ["/psd2/v1/accounts/a3"]);
  },
);

onEachStore(
  "consentScope() grants a BBAN consent the account with that BBAN only",
  { mode: "enforce" },
  async (gateway, core) => {
    const consent = await createConsent(gateway, {
      balances: [{ bban: "0000 0001 0190 4918" }],
    });
    assert.equal((await read(gateway, consent, "/v1/accounts")).body.accounts.length, 1);
    assert.equal((await read(gateway, consent, "/v1/accounts/a1/balances")).status, 401);
    assert.equal((await read(gateway, consent, "/v1/accounts/a2/balances")).status, 200);
    assert.deepEqual(accountReads(core), ["/psd2/v1/accounts/a2/balances"]);
  },
);

Deno.test("the production example refuses an account read it cannot place", async () => {
  const policy = parse(await Deno.readTextFile("config/production.example.yaml")) as {
    defaults: { consent_scope?: { mode?: string; unknown_account?: string } };
  };
  assert.equal(policy.defaults.consent_scope?.mode, "enforce");
  assert.equal(policy.defaults.consent_scope?.unknown_account, "refuse");
});
