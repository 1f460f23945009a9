import assert from "node:assert/strict";
import type { Hono } from "hono";
import { createSandbox } from "../../src/sandbox/mod.ts";
import { send, sendJson } from "./helpers.ts";

const TPP_OK = "https://tpp.example/ok";
const TPP_NOK = "https://tpp.example/nok";

/** A browser's view of the SCA page: a cookie jar, GET and form POST. */
function browser(app: Hono, link: string, headers: Record<string, string> = {}) {
  const path = new URL(link).pathname;
  let cookie = "";
  return {
    path,
    async get(query = "") {
      const res = await app.request(`${path}${query}`, { headers: { ...headers, cookie } });
      const set = res.headers.get("set-cookie");
      if (set) cookie = set.split(";")[0];
      return { res, html: await res.text() };
    },
    async post(form: Record<string, string>, options: { cookie?: string } = {}) {
      return await app.request(path, {
        method: "POST",
        headers: {
          ...headers,
          cookie: options.cookie ?? cookie,
          "content-type": "application/x-www-form-urlencoded",
        },
        body: new URLSearchParams(form).toString(),
      });
    },
  };
}

function csrfOf(html: string): string {
  const match = html.match(/name="csrf" value="([^"]+)"/);
  assert.ok(match, "the form carries a CSRF token");
  return match[1];
}

async function redirectPayment(
  app: Hono,
  options: { headers?: Record<string, string>; body?: Record<string, unknown> } = {},
) {
  const created = await sendJson(app, "/psd2/v1/payments/domestic", {
    method: "POST",
    headers: {
      "PSU-IP-Address": "192.0.2.1",
      "TPP-Redirect-URI": TPP_OK,
      "TPP-Nok-Redirect-URI": TPP_NOK,
      ...options.headers,
    },
    body: options.body ?? {
      instructedAmount: { currency: "GEL", amount: "125.50" },
      creditorName: "Tbilisi Energy",
      creditorAccount: { iban: "GE29NB0000000101904917" },
      debtorAccount: { iban: "GE42SB0000000101904917" },
    },
  });
  assert.equal(created.status, 201);
  return {
    link: created.body._links.scaRedirect.href as string,
    scaStatus: created.body._links.scaStatus.href as string,
    status: created.body._links.status.href as string,
  };
}

async function scaStatusOf(app: Hono, href: string): Promise<string> {
  return (await sendJson(app, href)).body.scaStatus;
}

Deno.test("mountScaPages() renders the summary and login with a strict CSP, no script and a session cookie", async () => {
  const app = createSandbox();
  const { link } = await redirectPayment(app);
  const { res, html } = await browser(app, link).get();
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "text/html; charset=utf-8");
  const csp = res.headers.get("content-security-policy") ?? "";
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /form-action 'self' https:\/\/tpp\.example(;|$)/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.match(csp, /base-uri 'none'/);
  const css = html.match(/<style>([\s\S]*?)<\/style>/)![1];
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(css));
  const hash = btoa(String.fromCharCode(...new Uint8Array(digest)));
  assert.ok(csp.includes(`style-src 'sha256-${hash}'`), "the inline style is allowed by its hash");
  assert.doesNotMatch(html, /<script|https?:\/\/(?!tpp)/i, "no script, no external asset");
  assert.equal(res.headers.get("x-frame-options"), "DENY");
  assert.equal(res.headers.get("cache-control"), "no-store");
  assert.equal(res.headers.get("referrer-policy"), "no-referrer");
  assert.match(
    res.headers.get("set-cookie") ?? "",
    /^sca_session=[\w-]+; HttpOnly; SameSite=Lax; Secure$/,
  );
  for (const part of ["125.50 GEL", "Tbilisi Energy", "GE29NB0000000101904917", "PSU-SCA-FAIL"]) {
    assert.ok(html.includes(part), part);
  }
  assert.match(html, /<h1>Authorise payment<\/h1>/);
});

Deno.test("mountScaPages() escapes what the TPP sent", async () => {
  const app = createSandbox();
  const { link } = await redirectPayment(app, {
    body: {
      instructedAmount: { currency: "GEL", amount: "1.00" },
      creditorName: `<script>alert("x")</script>`,
    },
  });
  const { html } = await browser(app, link).get();
  assert.ok(html.includes("&#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62;"));
  assert.doesNotMatch(html, /<script/);
});

Deno.test("mountScaPages() login, a wrong OTP, then the right one: finalised, 303 to TPP-Redirect-URI", async () => {
  const app = createSandbox();
  const payment = await redirectPayment(app);
  const page = browser(app, payment.link);
  const csrf = csrfOf((await page.get()).html);
  const login = await page.post({ csrf, action: "login", psuId: "PSU-OK", password: "x" });
  assert.equal(login.status, 303);
  assert.equal(login.headers.get("location"), page.path.split("/").at(-1));
  assert.equal(await scaStatusOf(app, payment.scaStatus), "scaMethodSelected");
  const otpPage = await page.get();
  assert.match(otpPage.html, /id="otp"/);
  assert.match(otpPage.html, /123456/);
  await page.post({ csrf, action: "approve", otp: "000000" });
  assert.match((await page.get()).html, /The code is wrong\. Attempts left: 2/);
  const approved = await page.post({ csrf, action: "approve", otp: "123456" });
  assert.equal(approved.status, 303);
  assert.equal(approved.headers.get("location"), TPP_OK);
  assert.equal(approved.headers.get("referrer-policy"), "no-referrer");
  assert.equal(await scaStatusOf(app, payment.scaStatus), "finalised");
  assert.equal((await sendJson(app, payment.status)).body.transactionStatus, "ACCP");
  const after = await page.get();
  assert.match(after.html, /The authorisation is finalised/);
  assert.doesNotMatch(after.html, /<form/);
});

Deno.test("mountScaPages() refuses a POST without the session's CSRF token or cookie (403), and nothing moves", async () => {
  const app = createSandbox();
  const payment = await redirectPayment(app);
  const page = browser(app, payment.link);
  const csrf = csrfOf((await page.get()).html);
  const other = browser(app, payment.link);
  const attempts = [
    await page.post({ action: "deny" }),
    await page.post({ csrf: `${csrf.slice(0, -1)}A`, action: "deny" }),
    await page.post({ csrf, action: "deny" }, { cookie: "" }),
    await page.post({ csrf, action: "deny" }, { cookie: "sca_session=forged" }),
    await other.post({ csrf, action: "deny" }),
  ];
  for (const res of attempts) {
    assert.equal(res.status, 403);
    assert.match(await res.text(), /This form has expired/);
  }
  assert.equal(await scaStatusOf(app, payment.scaStatus), "received");
  const res = await app.request(page.path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ csrf, action: "deny" }),
  });
  assert.equal(res.status, 403, "a JSON body is no form");
});

Deno.test("mountScaPages() Deny fails the authorisation and goes to TPP-Nok-Redirect-URI", async () => {
  const app = createSandbox();
  const payment = await redirectPayment(app);
  const page = browser(app, payment.link);
  const denied = await page.post({ csrf: csrfOf((await page.get()).html), action: "deny" });
  assert.equal(denied.status, 303);
  assert.equal(denied.headers.get("location"), TPP_NOK);
  assert.equal(await scaStatusOf(app, payment.scaStatus), "failed");
  assert.equal((await sendJson(app, payment.status)).body.transactionStatus, "RJCT");
});

Deno.test("mountScaPages() without a NOK URI a third wrong OTP goes to the redirect URI with error=sca_failed", async () => {
  const app = createSandbox();
  const payment = await redirectPayment(app, {
    headers: { "TPP-Nok-Redirect-URI": "", "TPP-Redirect-URI": `${TPP_OK}?state=7` },
  });
  const page = browser(app, payment.link);
  const csrf = csrfOf((await page.get()).html);
  await page.post({ csrf, action: "login", psuId: "PSU-SCA-FAIL", password: "x" });
  let last: Response | undefined;
  for (let i = 0; i < 3; i++) last = await page.post({ csrf, action: "approve", otp: "123456" });
  assert.equal(last!.status, 303);
  assert.equal(last!.headers.get("location"), `${TPP_OK}?state=7&error=sca_failed`);
  assert.equal(await scaStatusOf(app, payment.scaStatus), "failed");
});

Deno.test("mountScaPages() without any TPP URI the outcome is shown on the page", async () => {
  const app = createSandbox();
  const payment = await redirectPayment(app, {
    headers: { "TPP-Nok-Redirect-URI": "", "TPP-Redirect-URI": "" },
  });
  const page = browser(app, payment.link);
  const res = await page.post({ csrf: csrfOf((await page.get()).html), action: "deny" });
  assert.equal(res.status, 200);
  assert.match(await res.text(), /The authorisation has failed\./);
  assert.match(res.headers.get("content-security-policy") ?? "", /form-action 'self';/);
});

Deno.test("mountScaPages() an empty login stays on the login step with a notice", async () => {
  const app = createSandbox();
  const payment = await redirectPayment(app);
  const page = browser(app, payment.link);
  const csrf = csrfOf((await page.get()).html);
  const res = await page.post({ csrf, action: "login", psuId: " ", password: "" });
  assert.equal(res.status, 303);
  const again = await page.get();
  assert.match(again.html, /Enter your user ID and password/);
  assert.match(again.html, /id="password"/);
  assert.equal(await scaStatusOf(app, payment.scaStatus), "received");
});

Deno.test("mountScaPages() speaks Georgian by Accept-Language and English by ?lang=en", async () => {
  const app = createSandbox();
  const payment = await redirectPayment(app);
  const page = browser(app, payment.link, { "accept-language": "ka-GE,ka;q=0.9,en;q=0.8" });
  const ka = await page.get();
  assert.match(ka.html, /<html lang="ka">/);
  assert.match(ka.html, /<h1>გადახდის დადასტურება<\/h1>/);
  assert.match(ka.html, /href="\?lang=en"/);
  const en = await page.get("?lang=en");
  assert.match(en.html, /<h1>Authorise payment<\/h1>/);
});

Deno.test("mountScaPages() an unknown link is a 404 page", async () => {
  const app = createSandbox();
  const res = await app.request("/sca/unknown-token");
  assert.equal(res.status, 404);
  assert.match(res.headers.get("content-type") ?? "", /^text\/html/);
  assert.match(await res.text(), /This link is unknown/);
  const post = await app.request("/sca/unknown-token", { method: "POST" });
  assert.equal(post.status, 404);
});

Deno.test("mountScaPages() a payment cancellation is authorised on the page and returns to the DELETE's redirect URI", async () => {
  const app = createSandbox();
  const payment = await redirectPayment(app);
  await send(app, payment.scaStatus, { method: "PUT", body: { scaAuthenticationData: "1" } });
  const self = payment.status.replace(/\/status$/, "");
  const cancel = await sendJson(app, self, {
    method: "DELETE",
    headers: { "TPP-Redirect-URI": "https://tpp.example/cancelled" },
  });
  assert.equal(cancel.status, 202);
  assert.equal(cancel.headers.get("ASPSP-SCA-Approach"), "REDIRECT");
  const started = await sendJson(app, cancel.body._links.startAuthorisation.href, {
    method: "POST",
  });
  assert.equal(started.status, 201);
  const page = browser(app, started.body._links.scaRedirect.href);
  const first = await page.get();
  assert.match(first.html, /<h1>Authorise payment cancellation<\/h1>/);
  assert.match(first.res.headers.get("content-security-policy") ?? "", /https:\/\/tpp\.example/);
  const csrf = csrfOf(first.html);
  await page.post({ csrf, action: "login", psuId: "PSU-OK", password: "x" });
  const approved = await page.post({ csrf, action: "approve", otp: "123456" });
  assert.equal(approved.headers.get("location"), "https://tpp.example/cancelled");
  assert.equal((await sendJson(app, payment.status)).body.transactionStatus, "CANC");
});

Deno.test("mountScaPages() with redirectConfirmation: unconfirmed, the code on the redirect; a wrong code fails", async () => {
  const app = createSandbox();
  const setting = await sendJson(app, "/sandbox/settings", {
    method: "PUT",
    body: { redirectConfirmation: true },
  });
  assert.equal(setting.body.redirectConfirmation, true);
  for (const [sent, outcome] of [["right", "finalised"], ["wrong", "failed"]] as const) {
    const payment = await redirectPayment(app);
    const page = browser(app, payment.link);
    const csrf = csrfOf((await page.get()).html);
    await page.post({ csrf, action: "login", psuId: "PSU-OK", password: "x" });
    const approved = await page.post({ csrf, action: "approve", otp: "123456" });
    assert.equal(approved.status, 303);
    const target = new URL(approved.headers.get("location") ?? "");
    assert.equal(`${target.origin}${target.pathname}`, TPP_OK);
    const code = target.searchParams.get("confirmationCode") ?? "";
    assert.match(code, /^[0-9a-f]{24}$/);
    assert.equal(await scaStatusOf(app, payment.scaStatus), "unconfirmed");
    assert.match((await page.get()).html, new RegExp(code), "the page names the code, no form");
    const bare = await sendJson(app, payment.scaStatus, { method: "PUT", body: {} });
    assert.equal(bare.status, 400, "an unconfirmed authorisation takes only the code");
    assert.equal(bare.body.tppMessages[0].path, "confirmationCode");
    const confirmed = await sendJson(app, payment.scaStatus, {
      method: "PUT",
      body: { confirmationCode: sent === "right" ? code : "0".repeat(24) },
    });
    assert.equal(confirmed.status, 200);
    assert.equal(confirmed.body.scaStatus, outcome);
    const status = (await sendJson(app, payment.status)).body.transactionStatus;
    assert.equal(status, outcome === "finalised" ? "ACCP" : "RJCT");
  }
});
