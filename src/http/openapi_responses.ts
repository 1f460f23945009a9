/**
 * The answers of the published contract: the success body of each operation (the interface's
 * response tables, with the Berlin Group's value sets where the document shows only samples), the
 * Berlin Group error body per status (its codes from `src/psd2/errors.ts`), and the answer headers
 * the gateway adds. The fields, and which of them are required, follow the Berlin Group's OpenAPI
 * 1.3.11 where the interface document shows less (its samples omit `_links` and the SCA fields).
 * The bank's bodies may carry more fields than the document shows: a generated client types the
 * named ones and keeps the rest.
 */
import type { Operation } from "../psd2/catalogue.ts";
import { CODES, type ErrorStatus, STANDARD_CODES } from "../psd2/errors.ts";
import { AMOUNT } from "../bodies/amount.ts";
import type { JsonSchema } from "../bodies/headers.ts";
import { UUID } from "../lib/ids.ts";

/** ISO 20022 transaction statuses the Berlin Group uses. */
export const TRANSACTION_STATUS = [
  "ACCC",
  "ACCP",
  "ACSC",
  "ACSP",
  "ACTC",
  "ACWC",
  "ACWP",
  "ACFC",
  "RCVD",
  "PDNG",
  "RJCT",
  "CANC",
  "PATC",
  "PART",
];

/** Berlin Group SCA statuses. */
export const SCA_STATUS = [
  "received",
  "psuIdentified",
  "psuAuthenticated",
  "scaMethodSelected",
  "unconfirmed",
  "started",
  "finalised",
  "failed",
  "exempted",
];

/** Berlin Group consent statuses. */
export const CONSENT_STATUS = [
  "received",
  "rejected",
  "valid",
  "revokedByPsu",
  "expired",
  "terminatedByTpp",
  "partiallyAuthorised",
];

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

function object(properties: Record<string, JsonSchema>, required: string[] = []): JsonSchema {
  return { type: "object", properties, ...(required.length > 0 ? { required } : {}) };
}

const TEXT = { type: "string" };
const DATE = { type: "string", format: "date" };
const DATE_TIME = { type: "string", format: "date-time" };

/** The schemas every answer refers to, by component name. */
export function answerSchemas(): Record<string, JsonSchema> {
  return {
    Links: {
      type: "object",
      description: "Hyperlinks: link name to {href}, a relative path under the public prefix",
      additionalProperties: object({ href: TEXT }, ["href"]),
    },
    TppMessage: object({
      category: { type: "string", enum: ["ERROR", "WARNING"] },
      code: TEXT,
      path: TEXT,
      text: { type: "string", maxLength: 500 },
    }, ["category", "code"]),
    Amount: object({
      currency: { type: "string", pattern: "^[A-Z]{3}$" },
      amount: { type: "string", pattern: AMOUNT.source },
    }, ["currency", "amount"]),
    AccountReference: object({
      iban: TEXT,
      bban: TEXT,
      pan: TEXT,
      maskedPan: TEXT,
      msisdn: TEXT,
      currency: { type: "string", pattern: "^[A-Z]{3}$" },
    }),
    TransactionStatus: { type: "string", enum: TRANSACTION_STATUS },
    ScaStatus: { type: "string", enum: SCA_STATUS },
    ConsentStatus: { type: "string", enum: CONSENT_STATUS },
    Transaction: object({
      transactionId: TEXT,
      creditorName: TEXT,
      creditorAccount: ref("AccountReference"),
      debtorName: TEXT,
      debtorAccount: ref("AccountReference"),
      transactionAmount: ref("Amount"),
      bookingDate: DATE,
      valueDate: DATE,
      remittanceInformationUnstructured: TEXT,
    }, ["transactionAmount"]),
    Balance: object({
      balanceType: TEXT,
      balanceAmount: ref("Amount"),
      referenceDate: DATE,
      lastChangeDateTime: DATE_TIME,
    }, ["balanceType", "balanceAmount"]),
    Account: object({
      resourceId: TEXT,
      iban: TEXT,
      currency: { type: "string", pattern: "^[A-Z]{3}$" },
      product: TEXT,
      cashAccountType: TEXT,
      name: TEXT,
      ownerName: TEXT,
      balances: { type: "array", items: ref("Balance") },
      _links: ref("Links"),
    }),
    CardAccount: object({
      resourceId: TEXT,
      maskedPan: TEXT,
      currency: { type: "string", pattern: "^[A-Z]{3}$" },
      ownerName: TEXT,
      name: TEXT,
      product: TEXT,
      status: { type: "string", enum: ["enabled", "deleted", "blocked"] },
      usage: { type: "string", enum: ["PRIV", "ORGA"] },
      debitAccounting: { type: "boolean" },
      creditLimit: ref("Amount"),
      balances: { type: "array", items: ref("Balance") },
      _links: ref("Links"),
    }, ["maskedPan", "currency"]),
    CardTransaction: object({
      cardTransactionId: TEXT,
      terminalId: TEXT,
      transactionDate: DATE,
      bookingDate: DATE,
      valueDate: DATE,
      transactionAmount: ref("Amount"),
      originalAmount: ref("Amount"),
      cardAcceptorId: TEXT,
      merchantCategoryCode: TEXT,
      maskedPAN: TEXT,
      transactionDetails: TEXT,
      invoiced: { type: "boolean" },
    }, ["transactionAmount"]),
    AuthenticationObject: object({
      authenticationType: TEXT,
      authenticationVersion: TEXT,
      authenticationMethodId: { type: "string", maxLength: 35 },
      name: TEXT,
      explanation: TEXT,
    }, ["authenticationType", "authenticationMethodId"]),
    ChallengeData: object({
      image: TEXT,
      data: { type: "array", items: TEXT },
      imageLink: TEXT,
      otpMaxLength: { type: "integer" },
      otpFormat: { type: "string", enum: ["characters", "integer"] },
      additionalInformation: TEXT,
    }),
    Product: object({
      productId: TEXT,
      productCategory: TEXT,
      name: TEXT,
      isTailored: { type: "boolean" },
    }, ["productId"]),
  };
}

/** The body of the operation's answer with `status`, or undefined for an answer without one. */
export function successBody(op: Operation, status: number): JsonSchema | undefined {
  if (status === 204) return undefined;
  const links = { _links: ref("Links") };
  const messages = { tppMessages: { type: "array", items: ref("TppMessage") } };
  /** What an answer that starts or continues an authorisation may carry (embedded SCA). */
  const sca = {
    scaMethods: { type: "array", items: ref("AuthenticationObject") },
    chosenScaMethod: ref("AuthenticationObject"),
    challengeData: ref("ChallengeData"),
    psuMessage: TEXT,
  };
  const authorisation = object({
    scaStatus: ref("ScaStatus"),
    authorisationId: TEXT,
    ...sca,
    ...links,
    ...messages,
  }, ["scaStatus", "authorisationId", "_links"]);
  const scaStatus = object({
    scaStatus: ref("ScaStatus"),
    psuMessage: TEXT,
    trustedBeneficiaryFlag: { type: "boolean" },
    ...links,
    ...messages,
  }, ["scaStatus"]);
  // The update answers: the document's sample spells the status key oddly, so none is required.
  const update = object({ scaStatus: ref("ScaStatus"), authorisationId: TEXT, ...sca, ...links });
  const ids = object({ authorisationIds: { type: "array", items: TEXT } }, ["authorisationIds"]);
  const bodies: Record<string, JsonSchema> = {
    initiatePayment: object({
      transactionStatus: ref("TransactionStatus"),
      paymentId: TEXT,
      transactionFeeIndicator: { type: "boolean" },
      scaStatus: ref("ScaStatus"),
      ...sca,
      ...links,
      ...messages,
    }, ["transactionStatus", "paymentId", "_links"]),
    getPaymentInformation: object({ transactionStatus: ref("TransactionStatus") }),
    cancelPayment: object({ transactionStatus: ref("TransactionStatus"), ...links }, [
      "transactionStatus",
    ]),
    getPaymentInitiationStatus: object({ transactionStatus: ref("TransactionStatus") }, [
      "transactionStatus",
    ]),
    startPaymentAuthorisation: authorisation,
    startPaymentInitiationCancellationAuthorisation: authorisation,
    startConsentAuthorisation: authorisation,
    getPaymentInitiationAuthorisation: ids,
    getPaymentInitiationCancellationAuthorisationInformation: ids,
    getConsentAuthorisation: ids,
    getPaymentInitiationScaStatus: scaStatus,
    getPaymentCancellationScaStatus: scaStatus,
    getConsentScaStatus: scaStatus,
    updatePaymentPsuData: update,
    updatePaymentCancellationPsuData: update,
    updateConsentsPsuData: update,
    getAccountList: object({ accounts: { type: "array", items: ref("Account") } }, ["accounts"]),
    readAccountDetails: object({ account: ref("Account") }, ["account"]),
    getBalances: object({
      account: ref("AccountReference"),
      balances: { type: "array", items: ref("Balance") },
    }, ["balances"]),
    getTransactionList: object({
      account: ref("AccountReference"),
      transactions: object({
        booked: { type: "array", items: ref("Transaction") },
        pending: { type: "array", items: ref("Transaction") },
        ...links,
      }),
      balances: { type: "array", items: ref("Balance") },
      ...links,
    }),
    // Card accounts: Berlin Group 1.3.11 (cardAccountList ... cardAccountsTransactionsResponse200).
    getCardAccountList: object({ cardAccounts: { type: "array", items: ref("CardAccount") } }, [
      "cardAccounts",
    ]),
    readCardAccountDetails: object({ cardAccount: ref("CardAccount") }, ["cardAccount"]),
    getCardAccountBalances: object({
      cardAccount: ref("AccountReference"),
      debitAccounting: { type: "boolean" },
      balances: { type: "array", items: ref("Balance") },
    }, ["balances"]),
    getCardAccountTransactionList: object({
      cardAccount: ref("AccountReference"),
      debitAccounting: { type: "boolean" },
      cardTransactions: object({
        booked: { type: "array", items: ref("CardTransaction") },
        pending: { type: "array", items: ref("CardTransaction") },
        ...links,
      }, ["_links"]),
      balances: { type: "array", items: ref("Balance") },
      ...links,
    }),
    getTransactionDetails: object({ transactionsDetails: ref("Transaction") }, [
      "transactionsDetails",
    ]),
    createConsent: object({
      consentStatus: ref("ConsentStatus"),
      consentId: TEXT,
      scaStatus: ref("ScaStatus"),
      ...sca,
      ...links,
      ...messages,
    }, ["consentStatus", "consentId", "_links"]),
    getConsentInformation: object({
      access: { type: "object" },
      recurringIndicator: { type: "boolean" },
      validUntil: DATE,
      frequencyPerDay: { type: "integer", minimum: 1 },
      lastActionDate: DATE,
      consentStatus: ref("ConsentStatus"),
      ...links,
    }, ["access", "recurringIndicator", "validUntil", "frequencyPerDay", "consentStatus"]),
    getConsentStatus: object({ consentStatus: ref("ConsentStatus") }, ["consentStatus"]),
    createCheckoutOrder: object({
      status: TEXT,
      payment_hash: TEXT,
      links: {
        type: "array",
        items: object({ href: TEXT, rel: TEXT, method: TEXT, order_id: TEXT }, ["href", "rel"]),
      },
    }, ["status", "links"]),
    getCheckoutOrder: { type: "object" },
    calculateInstallment: {
      type: "array",
      items: object({
        month: { type: "number" },
        amount: TEXT,
        discount_code: TEXT,
      }, ["month", "amount"]),
    },
    checkAvailabilityOfFunds: object({ fundsAvailable: { type: "boolean" } }, ["fundsAvailable"]),
    // Signing baskets: Berlin Group 1.3.11 (signingBasketResponse-201, signingBasketResponse-200,
    // signingBasketStatusResponse-200; the authorisations as the payments' are).
    createSigningBasket: object({
      transactionStatus: ref("TransactionStatus"),
      basketId: TEXT,
      ...sca,
      ...links,
      ...messages,
    }, ["transactionStatus", "basketId", "_links"]),
    getSigningBasket: object({
      payments: { type: "array", minItems: 1, items: TEXT },
      consents: { type: "array", minItems: 1, items: TEXT },
      transactionStatus: ref("TransactionStatus"),
      ...links,
    }, ["transactionStatus"]),
    getSigningBasketStatus: object({ transactionStatus: ref("TransactionStatus") }, [
      "transactionStatus",
    ]),
    startSigningBasketAuthorisation: authorisation,
    getSigningBasketAuthorisation: ids,
    getSigningBasketScaStatus: scaStatus,
    updateSigningBasketPsuData: update,
    getProductById: object({
      product: ref("Product"),
      _links: { anyOf: [ref("Links"), { type: "null" }] },
    }, ["product"]),
  };
  const products = object({
    products: { type: "array", items: ref("Product") },
    _links: { anyOf: [ref("Links"), { type: "null" }] },
  }, ["products"]);
  return bodies[op.id] ?? (op.group === "products" ? products : { type: "object" });
}

/** The error body of one status: its codes enumerated where the standard has a list. */
export function errorSchema(status: ErrorStatus): JsonSchema {
  const standard = status in STANDARD_CODES;
  const code = standard
    ? { type: "string", enum: [...(CODES[status] as readonly string[])] }
    : { type: "string", description: `The gateway answers ${CODES[status].join(", ")}` };
  return object({
    tppMessages: {
      type: "array",
      minItems: 1,
      items: { allOf: [ref("TppMessage"), object({ code })] },
    },
    _links: ref("Links"),
  }, ["tppMessages"]);
}

/** The X-Request-ID every answer carries. */
export const REQUEST_ID_HEADER = {
  description:
    "The request's X-Request-ID, or one the gateway made when it had none or an invalid one",
  required: true,
  schema: { type: "string", format: "uuid", pattern: UUID.source },
};
