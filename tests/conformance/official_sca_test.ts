/**
 * The answers of an SCA flow and of a paged report, through the gateway, against the official
 * Berlin Group OpenAPI file's response schemas (NextGenPSD2 1.3.11 as adorsys XS2A ships it,
 * `psd2-api_v1.3.11-2021-10-01v1.yaml`): its required fields and the types of the SCA fields,
 * transcribed below under the file's names (read from the file, not copied: only what these
 * answers touch). A client generated from the official file reads these answers.
 */
import assert from "node:assert/strict";
import Ajv2020 from "ajv/dist/2020.js";
import { startBank } from "../e2e/bank.ts";
import { call, PSU_IP } from "../e2e/flow.ts";
import { recurringConsent } from "../support/consents.ts";
import { AUTHENTICATION_OBJECT, SCA_STATUS } from "./official_schemas.ts";

const TEXT = { type: "string" };
const HREF = { type: "object", required: ["href"], properties: { href: TEXT } };
const LINKS = { type: "object", additionalProperties: HREF };
/** `challengeData` */
const CHALLENGE_DATA = {
  type: "object",
  properties: {
    image: TEXT,
    data: { type: "array", items: TEXT },
    imageLink: TEXT,
    otpMaxLength: { type: "integer" },
    otpFormat: { type: "string", enum: ["characters", "integer"] },
    additionalInformation: TEXT,
  },
};
const SCA_FIELDS = {
  scaMethods: { type: "array", items: AUTHENTICATION_OBJECT },
  chosenScaMethod: AUTHENTICATION_OBJECT,
  challengeData: CHALLENGE_DATA,
  psuMessage: { type: "string", maxLength: 500 },
  _links: LINKS,
};

/** The consent both flows ask for: the transactions of one account. */
const TRANSACTIONS_CONSENT = recurringConsent({
  access: { transactions: [{ iban: "GE42SB0000000101904917" }] },
  validUntil: "9999-12-31",
});

const OFFICIAL = {
  "paymentInitationRequestResponse-201": {
    type: "object",
    required: ["transactionStatus", "paymentId", "_links"],
    properties: { transactionStatus: TEXT, paymentId: TEXT, scaStatus: SCA_STATUS, ...SCA_FIELDS },
  },
  "consentsResponse-201": {
    type: "object",
    required: ["consentStatus", "consentId", "_links"],
    properties: { consentStatus: TEXT, consentId: TEXT, scaStatus: SCA_STATUS, ...SCA_FIELDS },
  },
  startScaprocessResponse: {
    type: "object",
    required: ["scaStatus", "authorisationId", "_links"],
    properties: { scaStatus: SCA_STATUS, authorisationId: TEXT, ...SCA_FIELDS },
  },
  updatePsuAuthenticationResponse: {
    type: "object",
    required: ["scaStatus"],
    properties: { scaStatus: SCA_STATUS, authorisationId: TEXT, ...SCA_FIELDS },
  },
  selectPsuAuthenticationMethodResponse: {
    type: "object",
    required: ["scaStatus"],
    properties: { scaStatus: SCA_STATUS, ...SCA_FIELDS },
  },
  scaStatusResponse: {
    type: "object",
    required: ["scaStatus"],
    properties: {
      scaStatus: SCA_STATUS,
      psuMessage: TEXT,
      trustedBeneficiaryFlag: { type: "boolean" },
      _links: LINKS,
      tppMessages: { type: "array" },
    },
  },
  authorisationConfirmationResponse: {
    type: "object",
    required: ["scaStatus", "_links"],
    properties: {
      scaStatus: { type: "string", enum: ["finalised", "failed"] },
      _links: LINKS,
      psuMessage: TEXT,
    },
  },
  "transactionsResponse-200_json": {
    type: "object",
    properties: {
      transactions: {
        type: "object",
        required: ["_links"],
        properties: {
          booked: { type: "array" },
          pending: { type: "array" },
          information: { type: "array" },
          _links: LINKS,
        },
      },
      balances: { type: "array" },
      _links: LINKS,
    },
  },
};

// deno-lint-ignore no-explicit-any
const ajv = new (Ajv2020 as any)({ strict: false, allErrors: true });

function assertOfficial(name: keyof typeof OFFICIAL, body: unknown) {
  const validate = ajv.compile(OFFICIAL[name]);
  const ok = validate(body);
  assert.ok(ok, `${name}: ${JSON.stringify(validate.errors)} in ${JSON.stringify(body)}`);
}

Deno.test("official schemas: an embedded payment's and a consent's SCA answers fit the 1.3.11 file", async () => {
  await using bank = await startBank();
  const embedded = {
    "psu-ip-address": PSU_IP,
    "psu-id": "PSU-OK",
    "tpp-redirect-preferred": "false",
  };
  const created = await call(bank.gateway, "POST", "/v1/payments/domestic", {
    headers: { ...embedded, "tpp-explicit-authorisation-preferred": "true" },
    body: {
      debtorAccount: { iban: "GE42SB0000000101904917" },
      instructedAmount: { currency: "GEL", amount: "10.00" },
      creditorAccount: { iban: "GE29NB0000000101904917" },
      creditorName: "Tbilisi Energy",
    },
  });
  assertOfficial("paymentInitationRequestResponse-201", created.body);
  const started = await call(bank.gateway, "POST", created.body._links.startAuthorisation.href, {
    headers: { "psu-id": "PSU-OK" },
    body: { psuData: { password: "sandbox" } },
  });
  assert.equal(started.status, 201, JSON.stringify(started.body));
  assertOfficial("startScaprocessResponse", started.body);
  const href = started.body._links.selectAuthenticationMethod.href;
  const selected = await call(bank.gateway, "PUT", href, {
    body: { authenticationMethodId: started.body.scaMethods[0].authenticationMethodId },
  });
  assertOfficial("selectPsuAuthenticationMethodResponse", selected.body);
  const done = await call(bank.gateway, "PUT", href, { body: { scaAuthenticationData: "123456" } });
  assertOfficial("updatePsuAuthenticationResponse", done.body);
  assertOfficial("scaStatusResponse", (await call(bank.gateway, "GET", href)).body);

  const consent = await call(bank.gateway, "POST", "/v1/consents", {
    headers: embedded,
    body: TRANSACTIONS_CONSENT,
  });
  assertOfficial("consentsResponse-201", consent.body);
});

Deno.test("official schemas: the confirmation of a redirect and a paged report fit the 1.3.11 file", async () => {
  await using bank = await startBank();
  await bank.control("PUT", "/sandbox/settings", { redirectConfirmation: true });
  const consent = await call(bank.gateway, "POST", "/v1/consents", {
    headers: {
      "psu-ip-address": PSU_IP,
      "psu-id": "PSU-OK",
      "tpp-redirect-uri": "https://tpp.example/ok",
    },
    body: TRANSACTIONS_CONSENT,
  });
  assertOfficial("consentsResponse-201", consent.body);
  const code = await approveOnPage(consent.body._links.scaRedirect.href);
  const confirmed = await call(bank.gateway, "PUT", consent.body._links.confirmation.href, {
    body: { confirmationCode: code },
  });
  assert.equal(confirmed.body.scaStatus, "finalised");
  assertOfficial("authorisationConfirmationResponse", confirmed.body);

  const report = await call(
    bank.gateway,
    "GET",
    "/v1/accounts/5b1f3c2e-7a41-4d6b-9c0e-000000000001/transactions?bookingStatus=booked&dateFrom=2025-01-01&itemsPerPage=4&pageIndex=1",
    { headers: { "consent-id": consent.body.consentId } },
  );
  assert.equal(report.status, 200, JSON.stringify(report.body));
  assertOfficial("transactionsResponse-200_json", report.body);
  assert.deepEqual(Object.keys(report.body.transactions._links).sort(), [
    "account",
    "first",
    "last",
    "next",
    "previous",
  ]);
});

/** Logs in and approves on the SCA page as a browser's form posts would; the code it returns. */
async function approveOnPage(link: string): Promise<string> {
  const page = await fetch(link);
  const cookie = (page.headers.get("set-cookie") ?? "").split(";")[0];
  const csrf = (await page.text()).match(/name="csrf" value="([^"]+)"/)?.[1] ?? "";
  const post = (form: Record<string, string>) =>
    fetch(link, {
      method: "POST",
      redirect: "manual",
      headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ csrf, ...form }),
    });
  await (await post({ action: "login", psuId: "PSU-OK", password: "x" })).body?.cancel();
  const approved = await post({ action: "approve", otp: "123456" });
  await approved.body?.cancel();
  const target = new URL(approved.headers.get("location") ?? "", link);
  return target.searchParams.get("confirmationCode") ?? "";
}
