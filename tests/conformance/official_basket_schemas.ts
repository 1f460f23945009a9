/**
 * The signing baskets in the official Berlin Group OpenAPI file (NextGenPSD2 1.3.11, as adorsys
 * XS2A ships it: `psd2-api_v1.3.11-2021-10-01v1.yaml`), transcribed as JSON Schema under the
 * file's own names: the request body `signingBasket`, the answers `signingBasketResponse-201`,
 * `signingBasketResponse-200` and `signingBasketStatusResponse-200`, and the authorisation answers
 * a basket's sub-resources give (`startScaprocessResponse`, `authorisations`, `scaStatusResponse`,
 * `updatePsuAuthenticationResponse`, `selectPsuAuthenticationMethodResponse`), with the parts
 * they refer to. The error bodies are `ERROR_NG` (`official_schemas.ts`): `Error400_NG_SBS` and
 * its siblings have the same form.
 */

import { AUTHENTICATION_OBJECT, SCA_STATUS } from "./official_schemas.ts";

const TEXT = { type: "string" };

/** `hrefType`, and the `_links*` maps of them (open: the file lets the ASPSP add links). */
const HREF_TYPE = { type: "object", properties: { href: TEXT } };
const LINKS = { type: "object", additionalProperties: HREF_TYPE };

/** `psuMessageText` */
const PSU_MESSAGE_TEXT = { type: "string", maxLength: 500 };

/** `transactionStatus_SBS`: the codes the file lists for a basket. */
export const TRANSACTION_STATUS_SBS = {
  type: "string",
  enum: ["ACSC", "ACTC", "PATC", "RCVD", "RJCT", "CANC"],
};

/** `scaMethods`, `chosenScaMethod`, `challengeData` (its fields as open values). */
const SCA_FIELDS = {
  scaMethods: { type: "array", items: AUTHENTICATION_OBJECT },
  chosenScaMethod: AUTHENTICATION_OBJECT,
  challengeData: { type: "object" },
};

/** `paymentIdList`, `consentIdList` */
const ID_LIST = { type: "array", minItems: 1, items: TEXT };

/** `signingBasket`: the request body of `createSigningBasket`. */
export const SIGNING_BASKET = {
  type: "object",
  properties: { paymentIds: ID_LIST, consentIds: ID_LIST },
};

/** `signingBasketResponse-201` */
export const SIGNING_BASKET_201 = {
  type: "object",
  required: ["transactionStatus", "basketId", "_links"],
  properties: {
    transactionStatus: TRANSACTION_STATUS_SBS,
    basketId: TEXT,
    ...SCA_FIELDS,
    _links: LINKS,
    psuMessage: PSU_MESSAGE_TEXT,
    tppMessages: { type: "array" },
  },
};

/** `signingBasketResponse-200` */
export const SIGNING_BASKET_200 = {
  type: "object",
  required: ["transactionStatus"],
  properties: {
    payments: ID_LIST,
    consents: ID_LIST,
    transactionStatus: TRANSACTION_STATUS_SBS,
    _links: LINKS,
  },
};

/** `signingBasketStatusResponse-200` */
export const SIGNING_BASKET_STATUS_200 = {
  type: "object",
  required: ["transactionStatus"],
  properties: { transactionStatus: TRANSACTION_STATUS_SBS },
};

/** `startScaprocessResponse` */
export const START_SCAPROCESS_RESPONSE = {
  type: "object",
  required: ["scaStatus", "authorisationId", "_links"],
  properties: {
    scaStatus: SCA_STATUS,
    authorisationId: TEXT,
    ...SCA_FIELDS,
    _links: LINKS,
    psuMessage: PSU_MESSAGE_TEXT,
  },
};

/** `authorisations` */
export const AUTHORISATIONS = {
  type: "object",
  required: ["authorisationIds"],
  properties: { authorisationIds: { type: "array", items: TEXT } },
};

/** `scaStatusResponse` */
export const SCA_STATUS_RESPONSE = {
  type: "object",
  required: ["scaStatus"],
  properties: {
    scaStatus: SCA_STATUS,
    psuMessage: PSU_MESSAGE_TEXT,
    trustedBeneficiaryFlag: { type: "boolean" },
    _links: LINKS,
  },
};

/** `updatePsuAuthenticationResponse` and `selectPsuAuthenticationMethodResponse` */
export const UPDATE_PSU_DATA_RESPONSE = {
  type: "object",
  required: ["scaStatus"],
  properties: {
    ...SCA_FIELDS,
    _links: LINKS,
    scaStatus: SCA_STATUS,
    psuMessage: PSU_MESSAGE_TEXT,
    authorisationId: TEXT,
  },
};
