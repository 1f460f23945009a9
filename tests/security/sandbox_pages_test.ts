/**
 * Issue 35.9: the sandbox bank's pages and controls. A TPP-Redirect-URI could add directives to
 * the SCA page's Content-Security-Policy (the URL parser decodes `%3B` in a host to `;`), any web
 * page could approve an authorisation or reset the bank with a cross-site form post, and
 * `/sandbox/requests` on the SCA origin (the one PSUs' browsers reach) showed every TPP's
 * requests.
 */
import assert from "node:assert/strict";
import type { Hono } from "hono";
import { createSandbox } from "../../src/sandbox/mod.ts";
import { serveSandbox } from "../../src/sandbox/serve.ts";
import { sendJson } from "../sandbox/helpers.ts";

/** A payment with the redirect approach: its SCA page's path and its authorisation id. */
async function redirectPayment(app: Hono, redirectUri = "https://tpp.example/ok") {
  const created = await sendJson(app, "/psd2/v1/payments/domestic", {
    method: "POST",
    headers: { "PSU-IP-Address": "192.0.2.1", "TPP-Redirect-URI": redirectUri },
    body: {
      instructedAmount: { currency: "GEL", amount: "10.00" },
      creditorName: "Tbilisi Energy",
      creditorAccount: { iban: "GE29NB0000000101904917" },
      debtorAccount: { iban: "GE42SB0000000101904917" },
    },
  });
  assert.equal(created.status, 201);
  const scaStatus: string = created.body._links.scaStatus.href;
  return {
    page: new URL(created.body._links.scaRedirect.href).pathname,
    scaStatus,
    authorisationId: scaStatus.split("/").pop()!,
  };
}

/** The directive names of a Content-Security-Policy, in order. */
function directives(csp: string): string[] {
  return csp.split(";").map((part) => part.trim().split(/\s+/)[0]).filter((name) => name !== "");
}

Deno.test("sandbox: a TPP-Redirect-URI adds no directive to the SCA page's Content-Security-Policy", async () => {
  const app = createSandbox();
  const expected = ["default-src", "style-src", "form-action", "frame-ancestors", "base-uri"];
  for (
    const uri of [
      "https://tpp.example%3bsandbox%3breport-uri/cb",
      "https://tpp.example%3Bscript-src/cb",
      "https://a,b.example/cb",
    ]
  ) {
    const { page } = await redirectPayment(app, uri);
    const response = await app.request(page);
    await response.body?.cancel();
    assert.equal(response.status, 200, uri);
    const csp = response.headers.get("content-security-policy") ?? "";
    assert.deepEqual(directives(csp), expected, csp);
    assert.match(csp, /form-action 'self';/, "a URI that is no plain origin is left out");
  }
  const { page } = await redirectPayment(app, "https://tpp.example:8443/ok");
  const response = await app.request(page);
  await response.body?.cancel();
  assert.match(
    response.headers.get("content-security-policy") ?? "",
    /form-action 'self' https:\/\/tpp\.example:8443;/,
  );
});

Deno.test("sandbox: the controls refuse a change a browser sends from another site", async () => {
  const app = createSandbox();
  const { authorisationId, scaStatus } = await redirectPayment(app);
  const approve = `http://sandbox.test/sandbox/authorisations/${authorisationId}/approve`;
  const crossSite: Record<string, string>[] = [
    { "sec-fetch-site": "cross-site", origin: "https://evil.example" },
    { "sec-fetch-site": "same-site", origin: "https://evil.sandbox.test" },
    { origin: "https://evil.example" },
    { origin: "null" },
  ];
  for (const headers of crossSite) {
    const refused = await app.request(approve, {
      method: "POST",
      headers: { ...headers, "content-type": "application/x-www-form-urlencoded" },
    });
    assert.equal(refused.status, 403, JSON.stringify(headers));
    assert.equal((await refused.json()).tppMessages[0].code, "SERVICE_BLOCKED");
    const reset = await app.request("http://sandbox.test/sandbox/reset", {
      method: "POST",
      headers,
    });
    await reset.body?.cancel();
    assert.equal(reset.status, 403, JSON.stringify(headers));
  }
  assert.equal((await sendJson(app, scaStatus)).body.scaStatus, "received", "nothing moved");
  // Its own origin, and a client that is no browser, may.
  const own = await app.request(approve, {
    method: "POST",
    headers: { "sec-fetch-site": "same-origin", origin: "http://sandbox.test" },
  });
  assert.equal(own.status, 200);
  assert.equal((await own.json()).scaStatus, "finalised");
  const tool = await app.request("http://sandbox.test/sandbox/reset", { method: "POST" });
  assert.equal(tool.status, 204);
});

Deno.test("sandbox: /sandbox/requests and the other controls are not served on the SCA origin", async () => {
  const { server, url } = serveSandbox(0);
  try {
    const port = server.addr.port;
    // A TPP's request, through the gateway's address of the bank.
    const created = await fetch(`${url}/psd2/v1/consents/c-unknown/status`);
    await created.body?.cancel();
    // The SCA pages' origin (http://localhost:<port>) is what PSUs' browsers reach.
    for (const path of ["/sandbox/requests", "/sandbox/users", "/sandbox/clock"]) {
      const sca = await fetch(`http://localhost:${port}${path}`);
      const text = await sca.text();
      assert.equal(sca.status, 404, path);
      assert.doesNotMatch(text, /c-unknown/);
    }
    const own = await fetch(`${url}/sandbox/requests`);
    assert.equal(own.status, 200);
    assert.match(await own.text(), /c-unknown/, "the bank's own address still shows the log");
  } finally {
    await server.shutdown();
  }
});
