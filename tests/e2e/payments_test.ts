import assert from "node:assert/strict";
import { startGateway } from "../support/gateway.ts";
import { assertPublicLinks, call, PSU_IP } from "./flow.ts";

const PAYMENT = {
  endToEndIdentification: "E2E-2026-0001",
  debtorAccount: { iban: "GE42SB0000000101904917" },
  instructedAmount: { currency: "GEL", amount: "125.50" },
  creditorAccount: { iban: "GE29NB0000000101904917" },
  creditorAgent: "NBGEGE22",
  creditorName: "Tbilisi Energy",
  remittanceInformationUnstructured: "Invoice 2026-11",
};

const INITIATE = {
  "psu-ip-address": PSU_IP,
  "psu-id": "PSU-0001",
  "tpp-redirect-preferred": "true",
  "tpp-redirect-uri": "https://tpp.example/ok",
};

Deno.test("e2e: a single payment is initiated, authorised through its implicit authorisation, read and cancelled", async () => {
  await using gateway = await startGateway();
  const created = await call(gateway, "POST", "/v1/payments/domestic", {
    body: PAYMENT,
    headers: INITIATE,
  });
  assert.equal(created.status, 201);
  assert.equal(created.body.transactionStatus, "RCVD");
  const id = created.body.paymentId;
  assertPublicLinks(created.body);
  assert.equal(created.body._links.self.href, `/v1/payments/domestic/${id}`);
  // The SCA page is the sandbox itself, on a name the gateway does not rewrite (docs/try_it.md).
  assert.match(created.body._links.scaRedirect.href, /^http:\/\/localhost:\d+\/sca\//);
  assert.equal(created.headers.get("cache-control"), "no-store");

  const scaStatusHref = created.body._links.scaStatus.href;
  assert.match(scaStatusHref, new RegExp(`^/v1/payments/domestic/${id}/authorisations/`));
  const sca = await call(gateway, "GET", scaStatusHref);
  assert.equal(sca.status, 200);
  assert.equal(sca.body.scaStatus, "psuIdentified"); // PSU-ID was sent with the initiation

  const list = await call(gateway, "GET", `/v1/payments/domestic/${id}/authorisations`);
  assert.equal(list.status, 200);
  assert.equal(list.body.authorisationIds.length, 1);

  const confirmed = await call(gateway, "PUT", scaStatusHref, {
    body: { confirmationCode: "123456" },
  });
  assert.equal(confirmed.status, 200);
  assert.equal(confirmed.body.scaStatus, "finalised");
  assertPublicLinks(confirmed.body);

  const status = await call(gateway, "GET", `/v1/payments/domestic/${id}/status`);
  assert.deepEqual(status.body, { transactionStatus: "ACCP" });
  const information = await call(gateway, "GET", `/v1/payments/domestic/${id}`);
  assert.equal(information.status, 200);
  assert.equal(information.body.creditorName, "Tbilisi Energy");
  assert.equal(information.body.transactionStatus, "ACCP");

  // An authorised payment needs a cancellation authorisation: 202 with startAuthorisation.
  const cancel = await call(gateway, "DELETE", `/v1/payments/domestic/${id}`, {
    headers: { "tpp-redirect-preferred": "true", "tpp-redirect-uri": "https://tpp.example/ok" },
  });
  assert.equal(cancel.status, 202);
  assert.equal(cancel.body.transactionStatus, "ACTC");
  const startHref = cancel.body._links.startAuthorisation.href;
  assert.equal(startHref, `/v1/payments/domestic/${id}/cancellation-authorisations`);
  const cancellation = await call(gateway, "POST", startHref, {
    body: {},
    headers: { "psu-id": "PSU-0001" },
  });
  assert.equal(cancellation.status, 201);
  assertPublicLinks(cancellation.body);
  const cancellationId = cancellation.body.authorisationId;
  const cancellations = await call(gateway, "GET", startHref);
  assert.deepEqual(cancellations.body.authorisationIds, [cancellationId]);
  const cancellationSca = await call(gateway, "GET", `${startHref}/${cancellationId}`);
  assert.equal(cancellationSca.status, 200);
  const done = await call(gateway, "PUT", `${startHref}/${cancellationId}`, {
    body: { scaAuthenticationData: "654321" },
  });
  assert.equal(done.body.scaStatus, "finalised");
  const cancelled = await call(gateway, "GET", `/v1/payments/domestic/${id}/status`);
  assert.equal(cancelled.body.transactionStatus, "CANC");
});

Deno.test("e2e: a payment not yet authorised is cancelled at once with 204", async () => {
  await using gateway = await startGateway();
  const created = await call(gateway, "POST", "/v1/payments/foreign", {
    body: PAYMENT,
    headers: INITIATE,
  });
  assert.equal(created.status, 201);
  const cancel = await call(gateway, "DELETE", `/v1/payments/foreign/${created.body.paymentId}`);
  assert.equal(cancel.status, 204);
  assert.equal(cancel.body, undefined);
});

Deno.test("e2e: multilevel SCA answers startAuthorisation without SCA links; each PSU authorises", async () => {
  await using gateway = await startGateway();
  const created = await call(gateway, "POST", "/v1/payments/domestic", {
    body: PAYMENT,
    headers: { ...INITIATE, "psu-corporate-id": "CORP-77" },
  });
  assert.equal(created.status, 201);
  const links = created.body._links;
  assert.equal(links.scaRedirect, undefined);
  assert.equal(links.scaStatus, undefined);
  const start = links.startAuthorisation.href;
  for (const [psu, expected] of [["PSU-A", "PATC"], ["PSU-B", "ACCP"]]) {
    const auth = await call(gateway, "POST", start, { body: {}, headers: { "psu-id": psu } });
    assert.equal(auth.status, 201);
    const update = await call(gateway, "PUT", `${start}/${auth.body.authorisationId}`, {
      body: { scaAuthenticationData: "111111" },
    });
    assert.equal(update.body.scaStatus, "finalised");
    const status = await call(
      gateway,
      "GET",
      `/v1/payments/domestic/${created.body.paymentId}/status`,
    );
    assert.equal(status.body.transactionStatus, expected);
  }
});

Deno.test("e2e: decoupled approach moves the authorisation to psuIdentified on an empty update", async () => {
  await using gateway = await startGateway();
  const created = await call(gateway, "POST", "/v1/payments/domestic", {
    body: PAYMENT,
    headers: {
      "psu-ip-address": PSU_IP,
      "tpp-decoupled-preferred": "true",
      "tpp-explicit-authorisation-preferred": "true",
    },
  });
  const start = created.body._links.startAuthorisation.href;
  const auth = await call(gateway, "POST", start, { body: {} });
  assert.equal(auth.body.scaStatus, "received");
  const identified = await call(gateway, "PUT", `${start}/${auth.body.authorisationId}`, {
    body: {},
    headers: { "psu-id": "PSU-0001" },
  });
  assert.equal(identified.status, 200);
  assert.equal(identified.body.scaStatus, "psuIdentified");
});

Deno.test("e2e: bulk and periodic payments are initiated and read", async () => {
  await using gateway = await startGateway();
  const bulk = await call(gateway, "POST", "/v1/bulk-payments/domestic", {
    headers: INITIATE,
    body: {
      batchBookingPreferred: true,
      debtorAccount: PAYMENT.debtorAccount,
      payments: [
        {
          instructedAmount: { currency: "GEL", amount: "10.00" },
          creditorAccount: PAYMENT.creditorAccount,
          creditorName: "Alpha",
        },
        {
          instructedAmount: { currency: "GEL", amount: "20.00" },
          creditorAccount: PAYMENT.creditorAccount,
          creditorName: "Beta",
        },
      ],
    },
  });
  assert.equal(bulk.status, 201);
  assert.equal(bulk.body._links.self.href, `/v1/bulk-payments/domestic/${bulk.body.paymentId}`);
  const periodic = await call(gateway, "POST", "/v1/periodic-payments/domestic", {
    headers: INITIATE,
    body: {
      ...PAYMENT,
      startDate: "2030-01-01",
      frequency: "Monthly",
      executionRule: "following",
      dayOfExecution: "5",
    },
  });
  assert.equal(periodic.status, 201);
  const read = await call(
    gateway,
    "GET",
    `/v1/periodic-payments/domestic/${periodic.body.paymentId}`,
  );
  assert.equal(read.body.frequency, "Monthly");
});
