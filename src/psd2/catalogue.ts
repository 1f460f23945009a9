/**
 * The interface catalogue: every operation of both interface documents in one table.
 *
 * Routes, header rules, body validation and the upstream path are all derived from this table.
 * Where a document says "not shown", the choice made here is listed in the README and can be
 * overridden per operation in the policy (`operations.<id>.route`).
 */

/** Operation groups; policy overrides may target a whole group. */
export const GROUPS = [
  "pis",
  "ais",
  "consents",
  "cards",
  "piis",
  "baskets",
  "checkout",
  "installment",
  "products",
] as const;
export type Group = typeof GROUPS[number];

export type Method = "GET" | "POST" | "PUT" | "DELETE";

/**
 * What a request body is, for the body validator:
 * - `payment`: payment initiation (JSON per payment-service, XML for `pain.001-*` products)
 * - `consent`, `authorisation` (POST on authorisation resources), `authorisationUpdate` (PUT),
 *   `checkoutOrder`, `fundsConfirmation`, `signingBasket`: JSON bodies
 * - `none`: no body
 */
export type BodyKind =
  | "payment"
  | "consent"
  | "authorisation"
  | "authorisationUpdate"
  | "checkoutOrder"
  | "fundsConfirmation"
  | "signingBasket"
  | "none";

/** Rule of one path parameter. */
export interface ParamRule {
  /** The allowed values, when the interface lists them. */
  values?: readonly string[];
}

/** One operation of the interface. */
export interface Operation {
  /** The documents' operation id, for example `initiatePayment`. */
  id: string;
  group: Group;
  method: Method;
  /** Public path template with `{name}` parameters, as the documents write them. */
  path: string;
  /** Path template on the upstream; `undefined` means the public path under the upstream prefix. */
  upstreamPath?: string;
  /** Rules per path parameter (every parameter of `path` has an entry). */
  params: Record<string, ParamRule>;
  /** Headers the operation takes (lower case). */
  headers: readonly string[];
  /** Headers the operation requires (lower case). */
  required: readonly string[];
  /** Headers the interface defines for the operation's answer (lower case); see {@link answersOf}. */
  answers: readonly string[];
  body: BodyKind;
  /** Success statuses. */
  success: readonly number[];
  /** Marked deprecated by the documents. */
  deprecated?: boolean;
  /** The operation serves account or payment data (responses get `Cache-Control: no-store`). */
  sensitive: boolean;
}

/** Values of the `payment-service` path parameter. */
export const PAYMENT_SERVICES = ["payments", "bulk-payments", "periodic-payments"] as const;

/** Every payment product the interface names; which of them a bank offers is policy. */
export const PAYMENT_PRODUCTS = [
  "aspsp",
  "domestic",
  "foreign",
  "sepa-credit-transfers",
  "instant-sepa-credit-transfers",
  "target-2-payments",
  "cross-border-credit-transfers",
  "pain.001-sepa-credit-transfers",
  "pain.001-instant-sepa-credit-transfers",
  "pain.001-target-2-payments",
  "pain.001-cross-border-credit-transfers",
] as const;

/** Locales of the product catalogue path. */
export const PRODUCT_LOCALES = ["ge", "en"] as const;

const PSU_ID = ["psu-id", "psu-id-type", "psu-corporate-id", "psu-corporate-id-type"];
const PSU_CONTEXT = [
  "psu-ip-address",
  "psu-ip-port",
  "psu-accept",
  "psu-accept-charset",
  "psu-accept-encoding",
  "psu-accept-language",
  "psu-user-agent",
  "psu-http-method",
  "psu-device-id",
  "psu-geo-location",
];
const SIGNING = ["digest", "x-jws-signature", "signature", "tpp-signature-certificate"];
const COMMON = ["x-request-id", "authorization", ...SIGNING, ...PSU_CONTEXT];
const REDIRECT = ["tpp-redirect-preferred", "tpp-redirect-uri", "tpp-nok-redirect-uri"];
const NOTIFICATION = ["tpp-notification-uri", "tpp-notification-content-preferred"];
// TPP-Decoupled-Preferred is not in the document's lists of these operations, but a header of
// starting an authorisation (and of consent creation) in the Berlin Group standard.
const START_AUTH = [...COMMON, ...PSU_ID, ...REDIRECT, "tpp-decoupled-preferred", ...NOTIFICATION];

const PAYMENT = "/v1/{payment-service}/{payment-product}";
const PAYMENT_PARAMS = {
  "payment-service": { values: PAYMENT_SERVICES },
  "payment-product": { values: PAYMENT_PRODUCTS },
};
const PAYMENT_ID_PARAMS = { ...PAYMENT_PARAMS, paymentId: {} };
const PAYMENT_AUTH_PARAMS = { ...PAYMENT_ID_PARAMS, authorisationId: {} };

/** Answer headers of every operation: the echo, the media type, when to try again. */
const ANSWERS = ["x-request-id", "content-type", "retry-after"];

/**
 * The answer headers the interface defines for an operation: those of every operation; Location of
 * the resource a payment, consent or authorisation POST creates; ASPSP-SCA-Approach on every
 * payment and consent write (it starts or continues an authorisation); the ASPSP-Notification-*
 * pair where the TPP may ask for notifications.
 */
function answersOf(
  row: { group: Group; method: Method; headers: readonly string[] },
): readonly string[] {
  const answers = [...ANSWERS];
  const authorising = row.group === "pis" || row.group === "consents" || row.group === "baskets";
  if (authorising && row.method === "POST") answers.push("location");
  if (authorising && row.method !== "GET") answers.push("aspsp-sca-approach");
  if (row.headers.includes("tpp-notification-uri")) {
    answers.push("aspsp-notification-support", "aspsp-notification-content");
  }
  return answers;
}

type Row = Omit<Operation, "headers" | "required" | "params" | "sensitive" | "answers"> & {
  headers?: readonly string[];
  required?: readonly string[];
  params?: Record<string, ParamRule>;
};

function pis(row: Omit<Row, "group">): Operation {
  return complete({ ...row, group: "pis" }, true);
}

function ais(row: Omit<Row, "group">): Operation {
  return complete({
    ...row,
    group: "ais",
    required: ["x-request-id", "consent-id"],
    headers: [...COMMON, "consent-id"],
  }, true);
}

function cards(row: Omit<Row, "group">): Operation {
  return complete({
    ...row,
    group: "cards",
    required: ["x-request-id", "consent-id"],
    headers: [...COMMON, "consent-id"],
  }, true);
}

function baskets(row: Omit<Row, "group">): Operation {
  return complete({ ...row, group: "baskets" }, true);
}

function consents(row: Omit<Row, "group">): Operation {
  return complete({ ...row, group: "consents" }, true);
}

function complete(row: Row, sensitive: boolean): Operation {
  const headers = row.headers ?? COMMON;
  return {
    ...row,
    params: row.params ?? {},
    headers,
    required: row.required ?? ["x-request-id"],
    answers: answersOf({ ...row, headers }),
    sensitive,
  };
}

function product(id: string, path: string, params: Record<string, ParamRule> = {}): Operation {
  return {
    id,
    group: "products",
    method: "GET",
    path,
    params,
    headers: ["x-request-id", "authorization"],
    required: [],
    answers: ANSWERS,
    body: "none",
    success: [200],
    sensitive: false,
    upstreamPath: path,
  };
}

const LOCALE = { locale: { values: PRODUCT_LOCALES } };

/** Every operation of both documents. */
export const OPERATIONS: readonly Operation[] = [
  // Payment initiation (000, "Payment initiation").
  pis({
    id: "initiatePayment",
    method: "POST",
    path: PAYMENT,
    params: PAYMENT_PARAMS,
    headers: [
      ...COMMON,
      ...PSU_ID,
      ...REDIRECT,
      ...NOTIFICATION,
      "consent-id",
      "tpp-decoupled-preferred",
      "tpp-explicit-authorisation-preferred",
      "tpp-rejection-nofunds-preferred",
      "tpp-brand-logging-information",
      "content-type",
    ],
    required: ["x-request-id", "psu-ip-address"],
    body: "payment",
    success: [201],
  }),
  pis({
    id: "getPaymentInformation",
    method: "GET",
    path: `${PAYMENT}/{paymentId}`,
    params: PAYMENT_ID_PARAMS,
    body: "none",
    success: [200],
  }),
  pis({
    id: "cancelPayment",
    method: "DELETE",
    path: `${PAYMENT}/{paymentId}`,
    params: PAYMENT_ID_PARAMS,
    headers: [
      ...COMMON,
      ...REDIRECT,
      "tpp-decoupled-preferred",
      "tpp-explicit-authorisation-preferred",
    ],
    body: "none",
    success: [202, 204],
  }),
  pis({
    id: "getPaymentInitiationStatus",
    method: "GET",
    path: `${PAYMENT}/{paymentId}/status`,
    params: PAYMENT_ID_PARAMS,
    body: "none",
    success: [200],
  }),
  pis({
    id: "startPaymentAuthorisation",
    method: "POST",
    path: `${PAYMENT}/{paymentId}/authorisations`,
    params: PAYMENT_ID_PARAMS,
    headers: [...START_AUTH, "content-type"],
    body: "authorisation",
    success: [201],
  }),
  pis({
    id: "getPaymentInitiationAuthorisation",
    method: "GET",
    path: `${PAYMENT}/{paymentId}/authorisations`,
    params: PAYMENT_ID_PARAMS,
    body: "none",
    success: [200],
  }),
  pis({
    id: "getPaymentInitiationScaStatus",
    method: "GET",
    path: `${PAYMENT}/{paymentId}/authorisations/{authorisationId}`,
    params: PAYMENT_AUTH_PARAMS,
    body: "none",
    success: [200],
  }),
  pis({
    id: "updatePaymentPsuData",
    method: "PUT",
    path: `${PAYMENT}/{paymentId}/authorisations/{authorisationId}`,
    params: PAYMENT_AUTH_PARAMS,
    headers: [...COMMON, ...PSU_ID, "content-type"],
    body: "authorisationUpdate",
    success: [200],
  }),
  pis({
    id: "startPaymentInitiationCancellationAuthorisation",
    method: "POST",
    path: `${PAYMENT}/{paymentId}/cancellation-authorisations`,
    params: PAYMENT_ID_PARAMS,
    headers: [...START_AUTH, "content-type"],
    body: "authorisation",
    success: [201],
  }),
  pis({
    id: "getPaymentInitiationCancellationAuthorisationInformation",
    method: "GET",
    path: `${PAYMENT}/{paymentId}/cancellation-authorisations`,
    params: PAYMENT_ID_PARAMS,
    body: "none",
    success: [200],
  }),
  pis({
    id: "getPaymentCancellationScaStatus",
    method: "GET",
    path: `${PAYMENT}/{paymentId}/cancellation-authorisations/{authorisationId}`,
    params: PAYMENT_AUTH_PARAMS,
    body: "none",
    success: [200],
  }),
  pis({
    id: "updatePaymentCancellationPsuData",
    method: "PUT",
    path: `${PAYMENT}/{paymentId}/cancellation-authorisations/{authorisationId}`,
    params: PAYMENT_AUTH_PARAMS,
    headers: [...COMMON, ...PSU_ID, "content-type"],
    body: "authorisationUpdate",
    success: [200],
  }),

  // Account information (000, "Account information and consents").
  ais({ id: "getAccountList", method: "GET", path: "/v1/accounts", body: "none", success: [200] }),
  ais({
    id: "readAccountDetails",
    method: "GET",
    path: "/v1/accounts/{account-id}",
    params: { "account-id": {} },
    body: "none",
    success: [200],
  }),
  ais({
    id: "getBalances",
    method: "GET",
    path: "/v1/accounts/{account-id}/balances",
    params: { "account-id": {} },
    body: "none",
    success: [200],
  }),
  ais({
    id: "getTransactionList",
    method: "GET",
    path: "/v1/accounts/{account-id}/transactions",
    params: { "account-id": {} },
    body: "none",
    success: [200],
  }),
  // Path not shown in the document: the Berlin Group path, which the list's
  // `transactionDetails` link points to.
  ais({
    id: "getTransactionDetails",
    method: "GET",
    path: "/v1/accounts/{account-id}/transactions/{transactionId}",
    params: { "account-id": {}, transactionId: {} },
    body: "none",
    success: [200],
  }),

  // Consents.
  consents({
    id: "createConsent",
    method: "POST",
    path: "/v1/consents",
    headers: [
      ...START_AUTH,
      "tpp-explicit-authorisation-preferred",
      "tpp-brand-logging-information",
      "content-type",
    ],
    required: ["x-request-id", "psu-ip-address"],
    body: "consent",
    success: [201],
  }),
  consents({
    id: "getConsentInformation",
    method: "GET",
    path: "/v1/consents/{consentId}",
    params: { consentId: {} },
    body: "none",
    success: [200],
  }),
  // Success status not shown in the document: 204 as in the Berlin Group interface.
  consents({
    id: "deleteConsent",
    method: "DELETE",
    path: "/v1/consents/{consentId}",
    params: { consentId: {} },
    body: "none",
    success: [204],
  }),
  consents({
    id: "getConsentStatus",
    method: "GET",
    path: "/v1/consents/{consentId}/status",
    params: { consentId: {} },
    body: "none",
    success: [200],
  }),
  consents({
    id: "startConsentAuthorisation",
    method: "POST",
    path: "/v1/consents/{consentId}/authorisations",
    params: { consentId: {} },
    headers: [...START_AUTH, "content-type"],
    body: "authorisation",
    success: [201],
  }),
  consents({
    id: "getConsentAuthorisation",
    method: "GET",
    path: "/v1/consents/{consentId}/authorisations",
    params: { consentId: {} },
    body: "none",
    success: [200],
  }),
  consents({
    id: "getConsentScaStatus",
    method: "GET",
    path: "/v1/consents/{consentId}/authorisations/{authorisationId}",
    params: { consentId: {}, authorisationId: {} },
    body: "none",
    success: [200],
  }),
  consents({
    id: "updateConsentsPsuData",
    method: "PUT",
    path: "/v1/consents/{consentId}/authorisations/{authorisationId}",
    params: { consentId: {}, authorisationId: {} },
    headers: [...COMMON, ...PSU_ID, "content-type"],
    body: "authorisationUpdate",
    success: [200],
  }),

  // Card accounts (Berlin Group 1.3.11; not in the documents): as accounts, behind a consent.
  cards({
    id: "getCardAccountList",
    method: "GET",
    path: "/v1/card-accounts",
    body: "none",
    success: [200],
  }),
  cards({
    id: "readCardAccountDetails",
    method: "GET",
    path: "/v1/card-accounts/{account-id}",
    params: { "account-id": {} },
    body: "none",
    success: [200],
  }),
  cards({
    id: "getCardAccountBalances",
    method: "GET",
    path: "/v1/card-accounts/{account-id}/balances",
    params: { "account-id": {} },
    body: "none",
    success: [200],
  }),
  cards({
    id: "getCardAccountTransactionList",
    method: "GET",
    path: "/v1/card-accounts/{account-id}/transactions",
    params: { "account-id": {} },
    body: "none",
    success: [200],
  }),

  // Confirmation of funds (Berlin Group 1.3.11, PIIS; not in the documents).
  complete({
    id: "checkAvailabilityOfFunds",
    group: "piis",
    method: "POST",
    path: "/v1/funds-confirmations",
    headers: ["x-request-id", "authorization", "consent-id", ...SIGNING, "content-type"],
    body: "fundsConfirmation",
    success: [200],
  }, true),

  // Signing baskets (Berlin Group 1.3.11; not in the documents): payments and consents of one TPP
  // authorised together.
  baskets({
    id: "createSigningBasket",
    method: "POST",
    path: "/v1/signing-baskets",
    headers: [
      ...START_AUTH,
      "consent-id",
      "tpp-explicit-authorisation-preferred",
      "content-type",
    ],
    required: ["x-request-id", "psu-ip-address"],
    body: "signingBasket",
    success: [201],
  }),
  baskets({
    id: "getSigningBasket",
    method: "GET",
    path: "/v1/signing-baskets/{basketId}",
    params: { basketId: {} },
    body: "none",
    success: [200],
  }),
  baskets({
    id: "deleteSigningBasket",
    method: "DELETE",
    path: "/v1/signing-baskets/{basketId}",
    params: { basketId: {} },
    body: "none",
    success: [204],
  }),
  baskets({
    id: "getSigningBasketStatus",
    method: "GET",
    path: "/v1/signing-baskets/{basketId}/status",
    params: { basketId: {} },
    headers: [...COMMON, ...PSU_ID],
    body: "none",
    success: [200],
  }),
  baskets({
    id: "startSigningBasketAuthorisation",
    method: "POST",
    path: "/v1/signing-baskets/{basketId}/authorisations",
    params: { basketId: {} },
    headers: [...START_AUTH, "content-type"],
    body: "authorisation",
    success: [201],
  }),
  baskets({
    id: "getSigningBasketAuthorisation",
    method: "GET",
    path: "/v1/signing-baskets/{basketId}/authorisations",
    params: { basketId: {} },
    body: "none",
    success: [200],
  }),
  baskets({
    id: "getSigningBasketScaStatus",
    method: "GET",
    path: "/v1/signing-baskets/{basketId}/authorisations/{authorisationId}",
    params: { basketId: {}, authorisationId: {} },
    body: "none",
    success: [200],
  }),
  baskets({
    id: "updateSigningBasketPsuData",
    method: "PUT",
    path: "/v1/signing-baskets/{basketId}/authorisations/{authorisationId}",
    params: { basketId: {}, authorisationId: {} },
    headers: [...COMMON, ...PSU_ID, "content-type"],
    body: "authorisationUpdate",
    success: [200],
  }),

  // Merchant checkout (001), deprecated; status not shown: 201 for a created order.
  complete({
    id: "createCheckoutOrder",
    group: "checkout",
    method: "POST",
    path: "/api/v1/checkout/orders",
    upstreamPath: "/api/v1/checkout/orders",
    headers: ["x-request-id", "authorization", "content-type", ...SIGNING],
    required: ["authorization", "content-type"],
    body: "checkoutOrder",
    success: [201],
    deprecated: true,
  }, true),
  // Not listed as an operation, but the order's `self` link "retrieves payment details".
  complete({
    id: "getCheckoutOrder",
    group: "checkout",
    method: "GET",
    path: "/api/v1/checkout/orders/{order_id}",
    upstreamPath: "/api/v1/checkout/orders/{order_id}",
    params: { order_id: {} },
    headers: ["x-request-id", "authorization", ...SIGNING],
    required: ["authorization"],
    body: "none",
    success: [200],
    deprecated: true,
  }, true),
  // Installment calculator (001), deprecated; amount and client_id travel in the query.
  complete({
    id: "calculateInstallment",
    group: "installment",
    method: "GET",
    path: "/v1/services/installment/calculate",
    upstreamPath: "/v1/services/installment/calculate",
    headers: ["x-request-id", "authorization", "content-type"],
    required: ["authorization", "content-type"],
    body: "none",
    success: [200],
    deprecated: true,
  }, false),

  // Product catalogue (001); paths not shown in the document.
  product("getProducts", "/v1/products/{locale}", LOCALE),
  product("getDepositsWithlocale", "/v1/products/{locale}/deposits", LOCALE),
  product("getPersonalLoansWithLocale", "/v1/products/{locale}/personal-loans", LOCALE),
  product("getCredAndChrgCardsWithLocale", "/v1/products/{locale}/cards", LOCALE),
  product("getBusinessLoansWithLocale", "/v1/products/{locale}/business-loans", LOCALE),
  product("getProductById", "/v1/product/{id}", { id: {} }),
  product("getDeposits", "/v1/products/deposits"),
  product("getPersonalLoans", "/v1/products/personal-loans"),
  product("getCredAndChrgCards", "/v1/products/cards"),
  product("getBusinessLoans", "/v1/products/business-loans"),
];

/** Operation ids, for the policy schema. */
export const OPERATION_IDS = OPERATIONS.map((op) => op.id);

/** Looks an operation up by id. */
export function operation(id: string): Operation {
  const op = OPERATIONS.find((o) => o.id === id);
  if (!op) throw new Error(`Unknown operation "${id}"`);
  return op;
}

/** The names of the `{param}` segments of a path template, in order. */
export function templateParams(path: string): string[] {
  return [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
}

/** The upstream path template of an operation: its own, or the public path under the prefix. */
export function upstreamTemplate(
  operation: { path: string; upstreamPath?: string },
  prefix: string,
): string {
  return operation.upstreamPath ?? prefix + operation.path.replace(/^\/v1(?=\/|$)/, "");
}
