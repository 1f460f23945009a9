/**
 * The redirect approach in a real headless Chromium: a TPP creates a payment or a consent through
 * the gateway, the browser opens the `scaRedirect` link, the PSU logs in, enters the OTP and
 * approves (or denies), and the browser lands on the TPP's redirect (or NOK) URI with the
 * authorisation final as the gateway reports it.
 */
import assert from "node:assert/strict";
import type { Page } from "puppeteer-core";
import { browserTest } from "../support/browser.ts";
import { type Bank, createConsent, initiatePayment, startBank } from "./bank.ts";
import { call } from "./flow.ts";

const TPP = "https://tpp.example";

async function text(page: Page, selector: string): Promise<string> {
  return await page.$eval(selector, (element) => element.textContent ?? "");
}

/** Submits the current form with the button `action` and waits for the next page. */
async function submit(page: Page, action: string) {
  await Promise.all([page.waitForNavigation(), page.click(`button[value="${action}"]`)]);
}

async function login(page: Page, psuId: string) {
  const field = await page.$("#psuId");
  await field!.click({ count: 3 });
  await page.keyboard.press("Backspace");
  await page.type("#psuId", psuId);
  await page.type("#password", "any password");
  await submit(page, "login");
}

async function scaStatus(bank: Bank, href: string): Promise<string> {
  const read = await call(bank.gateway, "GET", href);
  assert.equal(read.status, 200);
  return read.body.scaStatus;
}

browserTest(
  "e2e browser: a payment is approved on the SCA page and the browser lands on TPP-Redirect-URI",
  async (b) => {
    await using bank = await startBank();
    const created = await initiatePayment(bank, {
      "psu-id": "PSU-OK",
      "tpp-redirect-preferred": "true",
      "tpp-redirect-uri": `${TPP}/payment-ok?state=s1`,
      "tpp-nok-redirect-uri": `${TPP}/payment-nok`,
    });
    const link = created.body._links.scaRedirect.href;
    assert.match(link, /^http:\/\/localhost:\d+\/sca\/[A-Za-z0-9_-]{43}$/);
    await b.serveOrigin(TPP);
    await b.page.setExtraHTTPHeaders({ "Accept-Language": "en-GB,en;q=0.9" });

    const first = await b.page.goto(link);
    await b.capture("summary-and-login");
    assert.equal(first?.status(), 200);
    assert.match(first?.headers()["content-security-policy"] ?? "", /default-src 'none'/);
    assert.equal(await text(b.page, "h1"), "Authorise payment");
    const summary = await text(b.page, "dl.summary");
    for (
      const part of ["125.50 GEL", "Tbilisi Energy", "GE29NB0000000101904917", "Invoice 2026-11"]
    ) {
      assert.ok(summary.includes(part), `${part} in ${summary}`);
    }
    assert.equal(await b.page.$eval("#psuId", (e) => e.getAttribute("value")), "PSU-OK");
    assert.ok((await text(b.page, "#test-users")).includes("PSU-NO-FUNDS"));

    await login(b.page, "PSU-OK");
    await b.capture("otp");
    assert.equal(await scaStatus(bank, created.body._links.scaStatus.href), "scaMethodSelected");
    await b.page.type("#otp", "000000");
    await submit(b.page, "approve");
    await b.capture("wrong-otp");
    assert.match(await text(b.page, ".notice"), /Attempts left: 2/);

    await b.page.type("#otp", "123456");
    await submit(b.page, "approve");
    await b.capture("tpp");
    assert.equal(b.page.url(), `${TPP}/payment-ok?state=s1`);
    assert.equal(await scaStatus(bank, created.body._links.scaStatus.href), "finalised");
    const status = await call(bank.gateway, "GET", created.body._links.status.href);
    assert.equal(status.body.transactionStatus, "ACCP");
  },
);

browserTest(
  "e2e browser: a payment denied on the SCA page fails and the browser lands on TPP-Nok-Redirect-URI",
  async (b) => {
    await using bank = await startBank();
    const created = await initiatePayment(bank, {
      "tpp-redirect-preferred": "true",
      "tpp-redirect-uri": `${TPP}/payment-ok`,
      "tpp-nok-redirect-uri": `${TPP}/payment-nok`,
    });
    await b.serveOrigin(TPP);
    await b.page.goto(created.body._links.scaRedirect.href);
    await b.capture("login");
    await submit(b.page, "deny");
    await b.capture("tpp");
    assert.equal(b.page.url(), `${TPP}/payment-nok`);
    assert.equal(await scaStatus(bank, created.body._links.scaStatus.href), "failed");
    const status = await call(bank.gateway, "GET", created.body._links.status.href);
    assert.equal(status.body.transactionStatus, "RJCT");
  },
);

browserTest(
  "e2e browser: a consent is approved in Georgian and the browser lands on TPP-Redirect-URI",
  async (b) => {
    await using bank = await startBank();
    const created = await createConsent(bank, {
      "tpp-redirect-preferred": "true",
      "tpp-redirect-uri": `${TPP}/consent-ok`,
    });
    await b.serveOrigin(TPP);
    await b.page.setExtraHTTPHeaders({ "Accept-Language": "ka-GE,ka;q=0.9,en;q=0.5" });
    await b.page.goto(created.body._links.scaRedirect.href);
    await b.capture("summary-and-login");
    assert.equal(await b.page.$eval("html", (e) => e.lang), "ka");
    assert.equal(await text(b.page, "h1"), "ანგარიშებზე წვდომის დადასტურება");
    const summary = await text(b.page, "dl.summary");
    assert.ok(summary.includes("GE42SB0000000101904917: ნაშთები, ტრანზაქციები"), summary);

    await login(b.page, "PSU-OK");
    await b.capture("otp");
    await b.page.type("#otp", "123456");
    await submit(b.page, "approve");
    await b.capture("tpp");
    assert.equal(b.page.url(), `${TPP}/consent-ok`);
    const consentId = created.body.consentId;
    const status = await call(bank.gateway, "GET", `/v1/consents/${consentId}/status`);
    assert.equal(status.body.consentStatus, "valid");
    assert.equal(await scaStatus(bank, created.body._links.scaStatus.href), "finalised");
  },
);

browserTest(
  "e2e browser: a consent denied at the OTP step is rejected; without a NOK URI the browser lands on the redirect URI with an error",
  async (b) => {
    await using bank = await startBank();
    const created = await createConsent(bank, {
      "tpp-redirect-preferred": "true",
      "tpp-redirect-uri": `${TPP}/consent-done`,
    });
    await b.serveOrigin(TPP);
    await b.page.goto(created.body._links.scaRedirect.href);
    await b.capture("login");
    await login(b.page, "PSU-OK");
    await b.capture("otp");
    await submit(b.page, "deny");
    await b.capture("tpp");
    assert.equal(b.page.url(), `${TPP}/consent-done?error=access_denied`);
    const status = await call(bank.gateway, "GET", `/v1/consents/${created.body.consentId}/status`);
    assert.equal(status.body.consentStatus, "rejected");
    assert.equal(await scaStatus(bank, created.body._links.scaStatus.href), "failed");
  },
);
