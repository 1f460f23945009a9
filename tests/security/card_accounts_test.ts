/**
 * Attacks through the card account operations (1.3.11), against a core that enforces no consent
 * scope and no frequency at all: reading a card the consent does not name, passing an account id
 * the consent grants (by IBAN) as a card account id, and reading a card more often than the
 * consent's frequencyPerDay. Each was served before card reads were account reads at the edge.
 */
import assert from "node:assert/strict";
import type { TestGateway } from "../support/gateway.ts";
import { startUpstream, type TestUpstream } from "../support/upstream.ts";
import { initiationHeaders } from "../support/requests.ts";
import { onEachStoreGateway } from "../support/each_store.ts";
import { tokenIssuer } from "../support/tpp_tokens.ts";
import { createConsentWith, recurringConsent } from "../support/consents.ts";

const issuer = await tokenIssuer();
const TPP = "PSDGE-NBG-000001";
const IBAN = "GE42SB0000000101904917";
const PAN = ["525412******3241", "403211******0042"];

/** A core that serves every read: an account `x1` and cards `x1` (same id) and `x2`. */
function looseCore(): TestUpstream {
  let consents = 0;
  return startUpstream((request) => {
    const path = new URL(request.url).pathname;
    if (request.method === "POST") {
      consents++;
      return Response.json({ consentStatus: "valid", consentId: `c-${consents}` }, { status: 201 });
    }
    if (path === "/psd2/v1/accounts") {
      return Response.json({ accounts: [{ resourceId: "x1", iban: IBAN, currency: "GEL" }] });
    }
    if (path === "/psd2/v1/card-accounts") {
      return Response.json({
        cardAccounts: PAN.map((maskedPan, i) => ({
          resourceId: `x${i + 1}`,
          maskedPan,
          currency: "GEL",
        })),
      });
    }
    return Response.json({ balances: [] });
  });
}

const POLICY = {
  defaults: {
    bearer_token: issuer.options,
    consent_scope: { mode: "enforce" as const, unknown_account: "refuse" as const },
    consent_frequency: { mode: "enforce" as const, time_zone: "Asia/Tbilisi" },
  },
};

async function createConsent(gateway: TestGateway, body: Record<string, unknown>) {
  return createConsentWith(
    gateway,
    initiationHeaders(await issuer.headers(TPP)),
    recurringConsent(body),
  );
}

/** A TPP-initiated read (no PSU-IP-Address). */
async function read(gateway: TestGateway, consent: string, path: string) {
  const response = await gateway.fetch(path, {
    headers: {
      "x-request-id": crypto.randomUUID(),
      "consent-id": consent,
      ...await issuer.headers(TPP),
    },
  });
  const body = await response.json();
  return { status: response.status, code: body.tppMessages?.[0]?.code };
}

function cardReads(core: TestUpstream): string[] {
  return core.received.map((r) => r.path).filter((p) => p.startsWith("/psd2/v1/card-accounts/"));
}

onEachStoreGateway(
  "a card the consent does not name is refused at the edge",
  { core: looseCore, policy: POLICY },
  async (gateway, core) => {
    const consent = await createConsent(gateway, {
      access: { transactions: [{ maskedPan: PAN[0] }] },
    });
    assert.equal((await read(gateway, consent, "/v1/card-accounts")).status, 200);
    for (const path of ["/v1/card-accounts/x2", "/v1/card-accounts/x2/balances"]) {
      const answer = await read(gateway, consent, path);
      assert.equal(answer.status, 401, path);
      assert.equal(answer.code, "CONSENT_INVALID");
    }
    assert.deepEqual(cardReads(core), []);
  },
);

onEachStoreGateway(
  "an account id the consent grants by IBAN does not pass as a card account id",
  { core: looseCore, policy: POLICY },
  async (gateway, core) => {
    const consent = await createConsent(gateway, { access: { balances: [{ iban: IBAN }] } });
    assert.equal((await read(gateway, consent, "/v1/accounts")).status, 200);
    assert.equal((await read(gateway, consent, "/v1/accounts/x1/balances")).status, 200);
    const card = await read(gateway, consent, "/v1/card-accounts/x1/balances");
    assert.equal(card.status, 401, "the card x1 is not the account x1");
    assert.equal(card.code, "CONSENT_INVALID");
    assert.deepEqual(cardReads(core), []);
  },
);

onEachStoreGateway(
  "card reads cannot go past the consent's frequencyPerDay",
  { core: looseCore, policy: POLICY },
  async (gateway, core) => {
    const consent = await createConsent(gateway, {
      access: { balances: [{ maskedPan: PAN[0] }] },
      frequencyPerDay: 2,
    });
    assert.equal((await read(gateway, consent, "/v1/card-accounts")).status, 200);
    const statuses = [];
    for (let i = 0; i < 3; i++) {
      statuses.push((await read(gateway, consent, "/v1/card-accounts/x1/balances")).status);
    }
    assert.deepEqual(statuses, [200, 200, 429]);
    assert.equal(cardReads(core).length, 2);
  },
);
