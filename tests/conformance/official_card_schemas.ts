/**
 * The card account parts of the official Berlin Group OpenAPI file (NextGenPSD2 1.3.11, as
 * adorsys XS2A ships it: `psd2-api_v1.3.11-2021-10-01v1.yaml`) that the card tests validate
 * against, transcribed as JSON Schema under the file's own names: the success bodies of the four
 * card account operations (`cardAccountList`, `OK_200_CardAccountDetails`,
 * `readCardAccountBalanceResponse-200`, `cardAccountsTransactionsResponse200`) with the schemas
 * they refer to, and the card transaction list's query parameters (`bookingStatusCard`, ...).
 * Patterns are anchored as the file's are meant (OpenAPI patterns are unanchored regexes).
 */

const currencyCode = { type: "string", pattern: "^[A-Z]{3}$" };
const amountValue = { type: "string", pattern: "^-?[0-9]{1,14}(\\.[0-9]{1,3})?$" };
const amount = {
  type: "object",
  required: ["currency", "amount"],
  properties: { currency: currencyCode, amount: amountValue },
};
const date = { type: "string", format: "date" };
const maskedPan = { type: "string", maxLength: 35 };
const hrefType = { type: "object", properties: { href: { type: "string" } } };

/** `balanceType`. */
const balanceType = {
  type: "string",
  enum: [
    "closingBooked",
    "expected",
    "openingBooked",
    "interimAvailable",
    "interimBooked",
    "forwardAvailable",
    "nonInvoiced",
  ],
};

/** `balance`, and `balanceList` its array. */
const balance = {
  type: "object",
  required: ["balanceAmount", "balanceType"],
  properties: {
    balanceAmount: amount,
    balanceType,
    creditLimitIncluded: { type: "boolean" },
    lastChangeDateTime: { type: "string", format: "date-time" },
    referenceDate: date,
    lastCommittedTransaction: { type: "string", maxLength: 35 },
  },
};
const balanceList = { type: "array", items: balance };

/** `accountReference` (its `other` and `cashAccountType` as open values). */
const accountReference = {
  type: "object",
  properties: {
    iban: { type: "string", pattern: "^[A-Z]{2}[0-9]{2}[a-zA-Z0-9]{1,30}$" },
    bban: { type: "string" },
    pan: { type: "string", maxLength: 35 },
    maskedPan,
    msisdn: { type: "string", maxLength: 35 },
    other: { type: "object" },
    currency: currencyCode,
    cashAccountType: { type: "string" },
  },
};

/** `_linksAccountDetails`. */
const linksAccountDetails = {
  type: "object",
  additionalProperties: hrefType,
  properties: { balances: hrefType, transactions: hrefType },
};

/** `cardAccountDetails`. */
const cardAccountDetails = {
  type: "object",
  required: ["maskedPan", "currency"],
  properties: {
    resourceId: { type: "string" },
    maskedPan,
    currency: currencyCode,
    ownerName: { type: "string", maxLength: 140 },
    name: { type: "string", maxLength: 70 },
    displayName: { type: "string", maxLength: 70 },
    product: { type: "string", maxLength: 35 },
    debitAccounting: { type: "boolean" },
    status: { type: "string", enum: ["enabled", "deleted", "blocked"] },
    usage: { type: "string", maxLength: 4, enum: ["PRIV", "ORGA"] },
    details: { type: "string", maxLength: 1000 },
    creditLimit: amount,
    balances: balanceList,
    _links: linksAccountDetails,
  },
};

/** `address`. */
const address = {
  type: "object",
  required: ["country"],
  properties: {
    streetName: { type: "string", maxLength: 70 },
    buildingNumber: { type: "string" },
    townName: { type: "string" },
    postCode: { type: "string" },
    country: { type: "string", pattern: "^[A-Z]{2}$" },
  },
};

/** `reportExchangeRate`. */
const reportExchangeRate = {
  type: "object",
  required: ["sourceCurrency", "exchangeRate", "unitCurrency", "targetCurrency", "quotationDate"],
  properties: {
    sourceCurrency: currencyCode,
    exchangeRate: { type: "string" },
    unitCurrency: currencyCode,
    targetCurrency: currencyCode,
    quotationDate: date,
    contractIdentification: { type: "string", maxLength: 35 },
  },
};

/** `cardTransaction`. */
const cardTransaction = {
  type: "object",
  required: ["transactionAmount"],
  properties: {
    cardTransactionId: { type: "string", maxLength: 35 },
    terminalId: { type: "string", maxLength: 35 },
    transactionDate: date,
    acceptorTransactionDateTime: { type: "string", format: "date-time" },
    bookingDate: date,
    valueDate: date,
    transactionAmount: amount,
    grandTotalAmount: amount,
    currencyExchange: { type: "array", items: reportExchangeRate },
    originalAmount: amount,
    markupFee: amount,
    markupFeePercentage: { type: "string" },
    cardAcceptorId: { type: "string", maxLength: 35 },
    cardAcceptorAddress: address,
    cardAcceptorPhone: { type: "string", pattern: "^\\+[0-9]{1,3}-[0-9()+\\-]{1,30}$" },
    merchantCategoryCode: { type: "string", minLength: 4, maxLength: 4 },
    maskedPAN: maskedPan,
    transactionDetails: { type: "string", maxLength: 1000 },
    invoiced: { type: "boolean" },
    proprietaryBankTransactionCode: { type: "string", maxLength: 35 },
  },
};
const cardTransactionList = { type: "array", items: cardTransaction };

/** `_linksCardAccountReport`. */
const linksCardAccountReport = {
  type: "object",
  additionalProperties: hrefType,
  properties: {
    cardAccount: hrefType,
    card: hrefType,
    first: hrefType,
    next: hrefType,
    previous: hrefType,
    last: hrefType,
  },
};

/** `cardAccountReport`. */
const cardAccountReport = {
  type: "object",
  required: ["_links"],
  properties: {
    booked: cardTransactionList,
    pending: cardTransactionList,
    _links: linksCardAccountReport,
  },
};

/** `_linksDownload`: a report's top-level links name at least `download`. */
const linksDownload = {
  type: "object",
  additionalProperties: hrefType,
  required: ["download"],
  properties: { download: hrefType },
};

/** `cardAccountList` (OK_200_CardAccountList). */
export const CARD_ACCOUNT_LIST = {
  type: "object",
  required: ["cardAccounts"],
  properties: { cardAccounts: { type: "array", items: cardAccountDetails } },
};

/** OK_200_CardAccountDetails: `cardAccount` of `cardAccountDetails`. */
export const CARD_ACCOUNT_DETAILS_200 = {
  type: "object",
  required: ["cardAccount"],
  properties: { cardAccount: cardAccountDetails },
};

/** `readCardAccountBalanceResponse-200` (OK_200_CardAccountBalances). */
export const READ_CARD_ACCOUNT_BALANCE_200 = {
  type: "object",
  required: ["balances"],
  properties: {
    cardAccount: accountReference,
    debitAccounting: { type: "boolean" },
    balances: balanceList,
  },
};

/** `cardAccountsTransactionsResponse200` (OK_200_CardAccountsTransactions). */
export const CARD_ACCOUNTS_TRANSACTIONS_200 = {
  type: "object",
  properties: {
    cardAccount: accountReference,
    debitAccounting: { type: "boolean" },
    cardTransactions: cardAccountReport,
    balances: balanceList,
    _links: linksDownload,
  },
};

/**
 * The query parameters of getCardAccountTransactionList: name, required, schema (`dateFrom`,
 * `dateTo`, `entryReferenceFrom`, `bookingStatusCard`, `deltaList`).
 */
export const CARD_TRANSACTION_QUERY = [
  { name: "dateFrom", required: false, schema: { type: "string", format: "date" } },
  { name: "dateTo", required: false, schema: { type: "string", format: "date" } },
  { name: "entryReferenceFrom", required: false, schema: { type: "string" } },
  {
    name: "bookingStatus",
    required: true,
    schema: { type: "string", enum: ["booked", "pending", "both"] },
  },
  { name: "deltaList", required: false, schema: { type: "boolean" } },
] as const;
