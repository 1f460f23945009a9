/**
 * Two things a PSU decides on the sandbox's SCA page, in a real headless Chromium, through the
 * gateway: the accounts of a bank-offered consent (the TPP names none; the consent then names
 * those picked), and, with the sandbox setting `redirectConfirmation`, the authorisation
 * confirmation step: the redirect to the TPP carries a `confirmationCode`, the authorisation is
 * `unconfirmed` until the TPP sends it.
 */
import assert from "node:assert/strict";
import type { Page } from "puppeteer-core";
import { browserTest } from "../support/browser.ts";
import { initiatePayment, startBank } from "./bank.ts";
import { call, PSU_IP } from "./flow.ts";

const TPP = "https://tpp.example";
const MAIN = "GE42SB0000000101904917";
const SAVINGS = "GE15SB0000000101904918";

async function submit(page: Page, action: string) {
  await Promise.all([page.waitForNavigation(), page.click(`button[value="${action}"]`)]);
}

async function login(page: Page) {
  await page.type("#password", "any password");
  await submit(page, "login");
}

browserTest(
  "e2e browser: a bank-offered consent names the accounts the PSU picks on the SCA page",
  async (b) => {
    await using bank = await startBank();
    const created = await call(bank.gateway, "POST", "/v1/consents", {
      headers: {
        "psu-ip-address": PSU_IP,
        "psu-id": "PSU-OK",
        "tpp-redirect-preferred": "true",
        "tpp-redirect-uri": `${TPP}/consent-ok`,
      },
      body: {
        access: { accounts: [], balances: [], transactions: [] },
        recurringIndicator: true,
        validUntil: "9999-12-31",
        frequencyPerDay: 4,
        combinedServiceIndicator: false,
      },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    await b.serveOrigin(TPP);
    await b.page.setExtraHTTPHeaders({ "Accept-Language": "en" });
    await b.page.goto(created.body._links.scaRedirect.href);
    await login(b.page);
    await b.capture("accounts");
    const offered = await b.page.$$eval(
      "#accounts input[name=account]",
      (boxes) => boxes.map((box) => box.getAttribute("value") ?? ""),
    );
    assert.ok(offered.includes(MAIN) && offered.includes(SAVINGS), offered.join());

    await b.page.type("#otp", "123456");
    await submit(b.page, "approve");
    await b.capture("none-chosen");
    assert.match(await b.page.$eval(".notice", (e) => e.textContent ?? ""), /at least one/);
    assert.equal(b.page.url().startsWith(TPP), false, "no account, no approval");

    await b.page.click(`#accounts input[value="${SAVINGS}"]`);
    await b.page.type("#otp", "123456");
    await submit(b.page, "approve");
    assert.equal(b.page.url(), `${TPP}/consent-ok`);

    const consentId = created.body.consentId;
    const read = await call(bank.gateway, "GET", `/v1/consents/${consentId}`);
    assert.equal(read.body.consentStatus, "valid");
    assert.deepEqual(read.body.access, {
      accounts: [{ iban: SAVINGS }],
      balances: [{ iban: SAVINGS }],
      transactions: [{ iban: SAVINGS }],
    });
    const list = await call(bank.gateway, "GET", "/v1/accounts", {
      headers: { "consent-id": consentId },
    });
    assert.deepEqual(list.body.accounts.map((a: { iban: string }) => a.iban), [SAVINGS]);
  },
);

browserTest(
  "e2e browser: with redirectConfirmation the TPP confirms the redirect's confirmationCode",
  async (b) => {
    await using bank = await startBank();
    const setting = await bank.control("PUT", "/sandbox/settings", { redirectConfirmation: true });
    assert.equal(setting.status, 200, JSON.stringify(setting.body));
    const created = await initiatePayment(bank, {
      "psu-id": "PSU-OK",
      "tpp-redirect-preferred": "true",
      "tpp-redirect-uri": `${TPP}/payment-ok?state=s1`,
    });
    const href = created.body._links.scaStatus.href;
    assert.equal(created.body._links.confirmation.href, href, "the standard's confirmation link");
    await b.serveOrigin(TPP);
    await b.page.goto(created.body._links.scaRedirect.href);
    await login(b.page);
    await b.page.type("#otp", "123456");
    await submit(b.page, "approve");
    await b.capture("tpp");
    const landed = new URL(b.page.url());
    assert.equal(`${landed.origin}${landed.pathname}`, `${TPP}/payment-ok`);
    assert.equal(landed.searchParams.get("state"), "s1");
    const code = landed.searchParams.get("confirmationCode") ?? "";
    assert.match(code, /^[0-9a-f]{24}$/);

    const waiting = await call(bank.gateway, "GET", href);
    assert.equal(waiting.body.scaStatus, "unconfirmed");
    assert.equal(waiting.body._links.confirmation.href, href);
    const before = await call(bank.gateway, "GET", created.body._links.status.href);
    assert.equal(before.body.transactionStatus, "RCVD", "not authorised before the confirmation");

    const confirmed = await call(bank.gateway, "PUT", href, { body: { confirmationCode: code } });
    assert.equal(confirmed.status, 200, JSON.stringify(confirmed.body));
    assert.equal(confirmed.body.scaStatus, "finalised");
    const after = await call(bank.gateway, "GET", created.body._links.status.href);
    assert.equal(after.body.transactionStatus, "ACCP");
  },
);
