/**
 * consent_frequency and the accesses of a consent as the standard means them: a one-off consent
 * reads the account list, the balances and every page of one transaction report (its `next`
 * links, or `pageIndex`) once; `withBalance` on the list is the list; a re-read, another report,
 * or the same pages by another TPP are new accesses.
 */
import assert from "node:assert/strict";
import type { TestGateway } from "../support/gateway.ts";
import { startUpstream, type TestUpstream } from "../support/upstream.ts";
import { consentBody } from "../support/requests.ts";
import { createConsentWith } from "../support/consents.ts";
import { onEachStoreGateway } from "../support/each_store.ts";
import { tokenIssuer } from "../support/tpp_tokens.ts";
import type { PolicyInput } from "../support/policies.ts";

const issuer = await tokenIssuer();
const OWNER = "PSDGE-NBG-000001";
const OTHER = "PSDGE-NBG-666666";
const PAGES = 3;
const REPORT = "/v1/accounts/a1/transactions";

/**
 * A core that creates consents and pages its transaction report: `cursor` pages link on with
 * opaque `next` links, `pageIndex` pages link with pageIndex.
 */
function pagingCore(): TestUpstream {
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
        account: { iban: "GE29NB0000000101904917" },
        transactions: { booked: [{ transactionId: `t${page}` }], _links: links },
      });
    }
    return Response.json({ accounts: [], balances: [] });
  });
}

const POLICY: PolicyInput = {
  defaults: {
    bearer_token: issuer.options,
    consent_frequency: { mode: "enforce", time_zone: "Asia/Tbilisi", max_per_day: 4 },
  },
};

async function createConsent(gateway: TestGateway, recurringIndicator: boolean) {
  return createConsentWith(gateway, {
    "content-type": "application/json",
    "psu-ip-address": "81.95.1.1",
    ...await issuer.headers(OWNER),
  }, { ...consentBody(), recurringIndicator, frequencyPerDay: 1 });
}

/** A TPP-initiated read; the status and, for a report, its `next` href. */
async function read(gateway: TestGateway, consent: string, path: string, tpp = OWNER) {
  const response = await gateway.fetch(path, {
    headers: {
      "x-request-id": crypto.randomUUID(),
      "consent-id": consent,
      ...await issuer.headers(tpp),
    },
  });
  const body = await response.json();
  const href: string | undefined = body.transactions?._links?.next?.href;
  return { status: response.status, next: href && href.slice(href.indexOf("/v1/")) };
}

/** Reads every page of the report from `first` on, following `next`; the statuses. */
async function everyPage(gateway: TestGateway, consent: string, first: string) {
  const statuses: number[] = [];
  let path: string | undefined = first;
  while (path) {
    const page = await read(gateway, consent, path);
    statuses.push(page.status);
    path = page.status === 200 ? page.next : undefined;
  }
  return statuses;
}

onEachStoreGateway(
  "consentFrequency() lets a one-off consent read the list, the balances and every page of a report",
  { core: pagingCore, policy: POLICY },
  async (gateway) => {
    const consent = await createConsent(gateway, false);
    assert.equal((await read(gateway, consent, "/v1/accounts?withBalance=true")).status, 200);
    assert.equal((await read(gateway, consent, "/v1/accounts/a1/balances")).status, 200);
    assert.deepEqual(
      await everyPage(gateway, consent, `${REPORT}?bookingStatus=booked&cursor-start=1`),
      [200, 200, 200],
      "the pages of the report follow its next links",
    );
    assert.equal(
      (await read(gateway, consent, "/v1/accounts")).status,
      429,
      "withBalance on the list is the list: read once",
    );
    assert.equal(
      (await read(gateway, consent, `${REPORT}?bookingStatus=booked&cursor-start=1`)).status,
      429,
      "the report's first page again is a new access",
    );
    assert.equal(
      (await read(gateway, consent, `${REPORT}?bookingStatus=booked&cursor=1`, OTHER)).status,
      200,
      "another TPP's read is its own first access",
    );
    assert.equal(
      (await read(gateway, consent, `${REPORT}?bookingStatus=booked&cursor=1`, OTHER)).status,
      429,
      "and never part of the owner's access",
    );
  },
);

onEachStoreGateway(
  "consentFrequency() counts the pageIndex pages of one report once, and another report anew",
  { core: pagingCore, policy: POLICY },
  async (gateway) => {
    const consent = await createConsent(gateway, true);
    assert.deepEqual(
      await everyPage(gateway, consent, `${REPORT}?bookingStatus=booked`),
      [200, 200, 200],
      "frequencyPerDay 1 reads the whole report",
    );
    assert.equal(
      (await read(gateway, consent, `${REPORT}?itemsPerPage=1&pageIndex=2&bookingStatus=booked`))
        .status,
      200,
      "a page of the report by pageIndex, parameters in any order",
    );
    assert.equal(
      (await read(gateway, consent, `${REPORT}?bookingStatus=pending&pageIndex=1`)).status,
      429,
      "a page of a report never read is a new access",
    );
  },
);
