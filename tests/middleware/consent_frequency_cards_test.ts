/**
 * consent_frequency on card accounts (1.3.11), the account tests' counterparts: card reads count
 * against frequencyPerDay as account reads do (per TPP, consent and resource; PSU-initiated reads
 * on a recurring consent not counted; one read of each resource on a one-off consent), on one
 * gateway and across two on Redis, and every page of one card transaction report (the `next`
 * links under `cardTransactions._links`, or `pageIndex`) is one access.
 */
import assert from "node:assert/strict";
// In-process through the app's fetch (the upstream is still real HTTP); see tests/support/gateway.ts.
import { gatewayApp as startGateway, type TestGateway } from "../support/gateway.ts";
import { startUpstream, type TestUpstream } from "../support/upstream.ts";
import { storeSetup, WITHOUT_REDIS } from "../support/redis.ts";
import { buildPolicy, type PolicyInput } from "../support/policies.ts";
import { createConsentWith, NEXT_YEAR } from "../support/consents.ts";
import { onEachStoreGateway } from "../support/each_store.ts";
import { tokenIssuer } from "../support/tpp_tokens.ts";

const issuer = await tokenIssuer();
const OWNER = "PSDGE-NBG-000001";
const OTHER = "PSDGE-NBG-666666";
const PAGES = 3;
const CARD = "/v1/card-accounts/k1";
const REPORT = `${CARD}/transactions`;

/**
 * A core that creates consents and answers card reads; its card report pages link on with opaque
 * `cursor` links when the first page asked with `cursor-start`, else with pageIndex.
 */
function cardCore(): TestUpstream {
  return startUpstream((request) => {
    const url = new URL(request.url);
    if (request.method === "POST" && url.pathname === "/psd2/v1/consents") {
      return Response.json(
        { consentStatus: "received", consentId: crypto.randomUUID() },
        { status: 201 },
      );
    }
    if (url.pathname.endsWith("/transactions")) {
      const cursor = url.searchParams.get("cursor");
      const page = Number(url.searchParams.get("pageIndex") ?? cursor ?? 0);
      const links: Record<string, { href: string }> = {};
      const base = `/psd2${REPORT}?bookingStatus=booked`;
      if (page + 1 < PAGES) {
        links.next = {
          href: cursor !== null || url.searchParams.has("cursor-start")
            ? `${base}&cursor=${page + 1}`
            : `${base}&pageIndex=${page + 1}`,
        };
      }
      return Response.json({
        cardAccount: { maskedPan: "525412******3241" },
        cardTransactions: {
          booked: [{
            cardTransactionId: `t${page}`,
            transactionAmount: { currency: "GEL", amount: "1.00" },
          }],
          _links: links,
        },
      });
    }
    return Response.json({ cardAccounts: [], balances: [] });
  });
}

const POLICY: PolicyInput = {
  defaults: {
    bearer_token: issuer.options,
    consent_frequency: { mode: "enforce", time_zone: "Asia/Tbilisi", max_per_day: 4 },
  },
};

async function createConsent(
  gateway: TestGateway,
  terms: { recurringIndicator: boolean; frequencyPerDay: number },
): Promise<string> {
  return createConsentWith(gateway, {
    "content-type": "application/json",
    "psu-ip-address": "81.95.1.1",
    ...await issuer.headers(OWNER),
  }, {
    access: { balances: [{ maskedPan: "525412******3241" }] },
    validUntil: NEXT_YEAR,
    combinedServiceIndicator: false,
    ...terms,
  });
}

/** A card read (TPP-initiated unless `psu`); the status and, for a report, its `next` path. */
async function read(
  gateway: TestGateway,
  consent: string,
  path: string,
  options: { tpp?: string; psu?: boolean } = {},
) {
  const headers: Record<string, string> = {
    "x-request-id": crypto.randomUUID(),
    "consent-id": consent,
    ...await issuer.headers(options.tpp ?? OWNER),
  };
  if (options.psu) headers["psu-ip-address"] = "81.95.1.1";
  const response = await gateway.fetch(path, { headers });
  const body = await response.json();
  const href: string | undefined = body.cardTransactions?._links?.next?.href;
  return { status: response.status, next: href && href.slice(href.indexOf("/v1/")) };
}

async function statuses(n: number, fn: () => Promise<{ status: number }>): Promise<number[]> {
  const out = [];
  for (let i = 0; i < n; i++) out.push((await fn()).status);
  return out;
}

/** Reads every page of the report from `first` on, following `next`; the statuses. */
async function everyPage(gateway: TestGateway, consent: string, first: string) {
  const out: number[] = [];
  let path: string | undefined = first;
  while (path) {
    const page = await read(gateway, consent, path);
    out.push(page.status);
    path = page.status === 200 ? page.next : undefined;
  }
  return out;
}

function policy(...parts: PolicyInput[]) {
  return buildPolicy(POLICY, ...parts);
}

Deno.test("consentFrequency() counts TPP-initiated card reads per consent and resource, up to frequencyPerDay", async () => {
  await using core = cardCore();
  await using gateway = await startGateway({ policy: policy(), upstream: core.url });
  const consent = await createConsent(gateway, { recurringIndicator: true, frequencyPerDay: 2 });
  const balances = () => read(gateway, consent, `${CARD}/balances`);
  assert.deepEqual(await statuses(3, balances), [200, 200, 429]);
  assert.deepEqual(await statuses(3, () => read(gateway, consent, CARD)), [200, 200, 429]);
  assert.deepEqual(
    await statuses(2, () => read(gateway, consent, "/v1/card-accounts")),
    [200, 200],
    "the card list is a resource of its own",
  );
  assert.deepEqual(
    await statuses(3, () => read(gateway, consent, `${CARD}/balances`, { psu: true })),
    [200, 200, 200],
    "PSU-initiated reads are not counted",
  );
  assert.equal(core.received.filter((r) => r.path === `/psd2${CARD}/balances`).length, 5);
});

Deno.test("consentFrequency() allows one read of each card resource on a one-off consent, PSU-initiated or not", async () => {
  await using core = cardCore();
  await using gateway = await startGateway({ policy: policy(), upstream: core.url });
  const consent = await createConsent(gateway, { recurringIndicator: false, frequencyPerDay: 1 });
  assert.deepEqual(
    await statuses(2, () => read(gateway, consent, `${CARD}/balances`, { psu: true })),
    [200, 429],
  );
  assert.deepEqual(await statuses(2, () => read(gateway, consent, CARD)), [200, 429]);
});

Deno.test({
  name: "consentFrequency() counts card reads across two gateway instances on Redis",
  ignore: WITHOUT_REDIS,
  async fn() {
    await using store = await storeSetup("redis");
    await using core = cardCore();
    const options = { policy: policy(store.policy), upstream: core.url, env: store.env };
    await using one = await startGateway(options);
    await using two = await startGateway(options);
    const consent = await createConsent(one, { recurringIndicator: true, frequencyPerDay: 3 });
    const out = [];
    for (const gateway of [two, one, two, one]) {
      out.push((await read(gateway, consent, `${CARD}/balances`)).status);
    }
    assert.deepEqual(out, [200, 200, 200, 429]);
  },
});

onEachStoreGateway(
  "consentFrequency() lets a one-off consent read the card list, balances and every page of a card report",
  { core: cardCore, policy: POLICY },
  async (gateway) => {
    const consent = await createConsent(gateway, { recurringIndicator: false, frequencyPerDay: 1 });
    assert.equal((await read(gateway, consent, "/v1/card-accounts")).status, 200);
    assert.equal((await read(gateway, consent, `${CARD}/balances`)).status, 200);
    const first = `${REPORT}?bookingStatus=booked&dateFrom=2025-01-01&cursor-start=1`;
    assert.deepEqual(
      await everyPage(gateway, consent, first),
      [200, 200, 200],
      "the pages of the card report follow its next links",
    );
    assert.equal(
      (await read(gateway, consent, first)).status,
      429,
      "the report's first page again is a new access",
    );
    const page = `${REPORT}?bookingStatus=booked&cursor=1`;
    assert.equal((await read(gateway, consent, page, { tpp: OTHER })).status, 200);
    assert.equal(
      (await read(gateway, consent, page, { tpp: OTHER })).status,
      429,
      "another TPP's read is its own access, never part of the owner's",
    );
  },
);

onEachStoreGateway(
  "consentFrequency() counts the pageIndex pages of one card report once, and another report anew",
  { core: cardCore, policy: POLICY },
  async (gateway) => {
    const consent = await createConsent(gateway, { recurringIndicator: true, frequencyPerDay: 1 });
    assert.deepEqual(
      await everyPage(gateway, consent, `${REPORT}?bookingStatus=booked&dateFrom=2025-01-01`),
      [200, 200, 200],
      "frequencyPerDay 1 reads the whole card report",
    );
    assert.equal(
      (await read(
        gateway,
        consent,
        `${REPORT}?itemsPerPage=1&dateFrom=2025-01-01&pageIndex=2&bookingStatus=booked`,
      )).status,
      200,
      "a page of the report by pageIndex, parameters in any order",
    );
    assert.equal(
      (await read(
        gateway,
        consent,
        `${REPORT}?bookingStatus=pending&dateFrom=2025-01-01&pageIndex=1`,
      ))
        .status,
      429,
      "a page of a card report never read is a new access",
    );
  },
);
