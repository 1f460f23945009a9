import assert from "node:assert/strict";
import { createSandbox } from "../../src/sandbox/mod.ts";
import { assertError, FINALISE, send, sendJson } from "./helpers.ts";

const PAYMENT = {
  endToEndIdentification: "E2E-1",
  debtorAccount: { iban: "GE42SB0000000101904917" },
  instructedAmount: { currency: "GEL", amount: "120.50" },
  creditorAccount: { iban: "GE40TB7745036010100001" },
  creditorName: "Magti LLC",
  remittanceInformationUnstructured: "Invoice 42",
};
const IP = { "PSU-IP-Address": "192.0.2.1" };

async function initiate(
  app: ReturnType<typeof createSandbox>,
  options: { headers?: Record<string, string>; path?: string } = {},
) {
  const { headers = {}, path = "/psd2/v1/payments/domestic" } = options;
  const res = await sendJson(app, path, {
    method: "POST",
    headers: { ...IP, ...headers },
    body: PAYMENT,
  });
  assert.equal(res.status, 201);
  return res.body;
}

Deno.test("POST payment creates RCVD with an implicit authorisation linked by scaStatus and scaRedirect", async () => {
  const app = createSandbox();
  const res = await send(app, "/psd2/v1/payments/domestic", {
    method: "POST",
    headers: IP,
    body: PAYMENT,
  });
  assert.equal(res.status, 201);
  assert.equal(res.headers.get("Server"), "legacy-core/7.2");
  assert.equal(res.headers.get("X-Powered-By"), "CoreBanking");
  assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
  const body = await res.json();
  const base = `/psd2/v1/payments/domestic/${body.paymentId}`;
  assert.equal(body.transactionStatus, "RCVD");
  assert.deepEqual(Object.keys(body._links).sort(), ["scaRedirect", "scaStatus", "self", "status"]);
  assert.equal(body._links.self.href, base);
  assert.equal(body._links.status.href, `${base}/status`);
  assert.match(body._links.scaStatus.href, new RegExp(`^${base}/authorisations/[0-9a-f-]{36}$`));
  assert.match(body._links.scaRedirect.href, /^https:\/\/sandbox-bank\.example\/sca\//);
  const auth = await sendJson(app, body._links.scaStatus.href);
  assert.equal(auth.status, 200);
  assert.equal(auth.body.scaStatus, "received");
  const list = await sendJson(app, `${base}/authorisations`);
  assert.deepEqual(list.body.authorisationIds, [body._links.scaStatus.href.split("/").pop()]);
});

Deno.test("POST payment with PSU-Corporate-ID (multilevel) links only startAuthorisation; two PSUs make it ACCP", async () => {
  const app = createSandbox();
  const body = await initiate(app, { headers: { "PSU-Corporate-ID": "corp-1" } });
  const base = `/psd2/v1/payments/domestic/${body.paymentId}`;
  assert.deepEqual(body._links, {
    self: { href: base },
    status: { href: `${base}/status` },
    startAuthorisation: { href: `${base}/authorisations` },
  });
  assert.deepEqual((await sendJson(app, `${base}/authorisations`)).body.authorisationIds, []);
  const first = await sendJson(app, `${base}/authorisations`, {
    method: "POST",
    headers: { "PSU-ID": "psu-1" },
  });
  assert.equal(first.status, 201);
  assert.equal(first.body.scaStatus, "psuIdentified");
  const second = await sendJson(app, `${base}/authorisations`, {
    method: "POST",
    headers: { "PSU-ID": "psu-2" },
  });
  assert.notEqual(first.body.authorisationId, second.body.authorisationId);
  await send(app, first.body._links.scaStatus.href, { method: "PUT", body: FINALISE });
  assert.equal((await sendJson(app, `${base}/status`)).body.transactionStatus, "PATC");
  await send(app, second.body._links.scaStatus.href, { method: "PUT", body: FINALISE });
  assert.equal((await sendJson(app, `${base}/status`)).body.transactionStatus, "ACCP");
});

Deno.test("POST payment with TPP-Explicit-Authorisation-Preferred links startAuthorisation; one authorisation suffices", async () => {
  const app = createSandbox();
  const body = await initiate(app, { headers: { "TPP-Explicit-Authorisation-Preferred": "true" } });
  assert.equal(body._links.scaStatus, undefined);
  assert.equal(body._links.scaRedirect, undefined);
  const started = await sendJson(app, body._links.startAuthorisation.href, { method: "POST" });
  assert.equal(started.body.scaStatus, "received");
  await send(app, started.body._links.scaStatus.href, { method: "PUT", body: FINALISE });
  const status = await sendJson(app, `${body._links.self.href}/status`);
  assert.equal(status.body.transactionStatus, "ACCP");
});

Deno.test("POST payment picks decoupled only when decoupled is preferred and redirect is not", async () => {
  const app = createSandbox();
  const decoupled = await initiate(app, { headers: { "TPP-Decoupled-Preferred": "true" } });
  assert.equal(decoupled._links.scaRedirect, undefined);
  assert.ok(decoupled._links.scaStatus);
  const both = await initiate(app, {
    headers: { "TPP-Decoupled-Preferred": "true", "TPP-Redirect-Preferred": "true" },
  });
  assert.ok(both._links.scaRedirect);
});

Deno.test("GET payment returns the stored body plus transactionStatus; /status only the status", async () => {
  const app = createSandbox();
  const created = await initiate(app, { path: "/psd2/v1/periodic-payments/sepa-credit-transfers" });
  const read = await sendJson(app, created._links.self.href);
  assert.equal(read.status, 200);
  assert.deepEqual(read.body, { ...PAYMENT, transactionStatus: "RCVD" });
  const status = await sendJson(app, created._links.status.href);
  assert.deepEqual(status.body, { transactionStatus: "RCVD" });
});

Deno.test("POST pain.001 payment stores the XML body as given", async () => {
  const app = createSandbox();
  const xml = "<Document><CstmrCdtTrfInitn/></Document>";
  const res = await sendJson(app, "/psd2/v1/bulk-payments/pain.001-sepa-credit-transfers", {
    method: "POST",
    headers: { ...IP, "content-type": "application/xml" },
    body: xml,
  });
  assert.equal(res.status, 201);
  const read = await send(app, res.body._links.self.href);
  assert.equal(read.headers.get("content-type"), "application/xml");
  assert.equal(await read.text(), xml);
});

Deno.test("DELETE an authorised payment answers 202 ACTC; a finalised cancellation authorisation makes it CANC", async () => {
  const app = createSandbox();
  const created = await initiate(app);
  const base = created._links.self.href;
  await send(app, created._links.scaStatus.href, { method: "PUT", body: FINALISE });
  assert.equal((await sendJson(app, `${base}/status`)).body.transactionStatus, "ACCP");
  const cancel = await sendJson(app, base, { method: "DELETE" });
  assert.equal(cancel.status, 202);
  assert.deepEqual(cancel.body, {
    transactionStatus: "ACTC",
    _links: {
      self: { href: base },
      status: { href: `${base}/status` },
      startAuthorisation: { href: `${base}/cancellation-authorisations` },
    },
  });
  assert.equal((await sendJson(app, `${base}/status`)).body.transactionStatus, "ACTC");
  const auth = await sendJson(app, cancel.body._links.startAuthorisation.href, { method: "POST" });
  assert.equal(auth.status, 201);
  assert.match(auth.body._links.scaStatus.href, /\/cancellation-authorisations\/[0-9a-f-]{36}$/);
  const list = await sendJson(app, `${base}/cancellation-authorisations`);
  assert.deepEqual(list.body.authorisationIds, [auth.body.authorisationId]);
  const put = await sendJson(app, auth.body._links.scaStatus.href, {
    method: "PUT",
    body: FINALISE,
  });
  assert.equal(put.body.scaStatus, "finalised");
  assert.equal((await sendJson(app, `${base}/status`)).body.transactionStatus, "CANC");
  await assertError(send(app, base, { method: "DELETE" }), {
    status: 405,
    code: "CANCELLATION_INVALID",
  });
});

Deno.test("DELETE a payment not yet authorised (RCVD) answers 204 and cancels it", async () => {
  const app = createSandbox();
  const created = await initiate(app);
  const res = await send(app, created._links.self.href, { method: "DELETE" });
  assert.equal(res.status, 204);
  assert.equal(await res.text(), "");
  assert.equal(res.headers.get("Server"), "legacy-core/7.2");
  const status = await sendJson(app, created._links.status.href);
  assert.equal(status.body.transactionStatus, "CANC");
});

Deno.test("Authorisations refuse to start when the payment is not in the matching state", async () => {
  const app = createSandbox();
  const created = await initiate(app);
  const base = created._links.self.href;
  await assertError(send(app, `${base}/cancellation-authorisations`, { method: "POST" }), {
    status: 409,
    code: "STATUS_INVALID",
  });
  await send(app, created._links.scaStatus.href, { method: "PUT", body: FINALISE });
  await assertError(send(app, `${base}/authorisations`, { method: "POST" }), {
    status: 409,
    code: "STATUS_INVALID",
  });
});

Deno.test("Payment routes answer 404 RESOURCE_UNKNOWN for unknown ids, products and services", async () => {
  const app = createSandbox();
  const created = await initiate(app);
  const id = created.paymentId;
  await assertError(send(app, `/psd2/v1/payments/domestic/${crypto.randomUUID()}`), {
    status: 404,
    code: "RESOURCE_UNKNOWN",
  });
  await assertError(send(app, `/psd2/v1/payments/foreign/${id}`), {
    status: 404,
    code: "RESOURCE_UNKNOWN",
  });
  await assertError(send(app, `/psd2/v1/transfers/domestic/${id}`), {
    status: 404,
    code: "RESOURCE_UNKNOWN",
  });
  await assertError(send(app, `/psd2/v1/payments/domestic/${id}/authorisations/nope`), {
    status: 404,
    code: "RESOURCE_UNKNOWN",
  });
});

Deno.test("POST payment with malformed JSON answers 400 FORMAT_ERROR", async () => {
  const app = createSandbox();
  for (const body of ["{not json", "[1,2]", "", "null"]) {
    await assertError(
      send(app, "/psd2/v1/payments/domestic", {
        method: "POST",
        headers: { ...IP, "content-type": "application/json" },
        body,
      }),
      { status: 400, code: "FORMAT_ERROR" },
    );
  }
});

Deno.test("POST payment answers Location and ASPSP-SCA-Approach by the TPP's preferences", async () => {
  const app = createSandbox();
  const cases: [Record<string, string>, string][] = [
    [{}, "REDIRECT"],
    [{ "TPP-Redirect-Preferred": "true" }, "REDIRECT"],
    [{ "TPP-Redirect-Preferred": "false" }, "EMBEDDED"],
    [{ "TPP-Decoupled-Preferred": "true" }, "DECOUPLED"],
    [{ "TPP-Decoupled-Preferred": "true", "TPP-Redirect-Preferred": "false" }, "DECOUPLED"],
    [{ "TPP-Decoupled-Preferred": "true", "TPP-Redirect-Preferred": "true" }, "REDIRECT"],
  ];
  for (const [headers, approach] of cases) {
    const res = await sendJson(app, "/psd2/v1/payments/domestic", {
      method: "POST",
      headers: { ...IP, ...headers },
      body: PAYMENT,
    });
    assert.equal(res.status, 201);
    assert.equal(res.headers.get("Location"), res.body._links.self.href);
    assert.equal(res.headers.get("ASPSP-SCA-Approach"), approach, JSON.stringify(headers));
  }
});

Deno.test("POST payment of PSU-MULTI needs two authorisations; PSU-NO-FUNDS is RJCT with the reason once authorised", async () => {
  const app = createSandbox();
  const multi = await initiate(app, { headers: { "PSU-ID": "psu-multi" } });
  assert.deepEqual(Object.keys(multi._links).sort(), ["self", "startAuthorisation", "status"]);
  const poor = await initiate(app, { headers: { "PSU-ID": "PSU-NO-FUNDS" } });
  await send(app, poor._links.scaStatus.href, { method: "PUT", body: FINALISE });
  const status = await sendJson(app, poor._links.status.href);
  assert.equal(status.body.transactionStatus, "RJCT");
  assert.equal(status.body.fundsAvailable, false);
  assert.deepEqual(status.body.tppMessages.map((m: { code: string }) => m.code), [
    "FUNDS_NOT_AVAILABLE",
  ]);
  const read = await sendJson(app, poor._links.self.href);
  assert.equal(read.body.creditorName, "Magti LLC");
  assert.equal(read.body.tppMessages[0].code, "FUNDS_NOT_AVAILABLE");
});
