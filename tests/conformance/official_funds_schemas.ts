/**
 * The confirmation of funds in the official Berlin Group OpenAPI file (NextGenPSD2 1.3.11, as
 * adorsys XS2A ships it: `psd2-api_v1.3.11-2021-10-01v1.yaml`), transcribed as JSON Schema under
 * the file's own names: the request body `confirmationOfFunds` with the `accountReference`,
 * `otherType` and `amount` it refers to, and the body of `OK_200_ConfirmationOfFunds`. Patterns
 * are the file's, unanchored as OpenAPI reads them. The error bodies are `ERROR_NG`
 * (`official_schemas.ts`): `Error400_NG_PIIS` and its siblings have the same form.
 */

const string = (maxLength?: number) =>
  maxLength ? { type: "string", maxLength } : { type: "string" };

/** `currencyCode` */
export const CURRENCY_CODE = { type: "string", pattern: "[A-Z]{3}" };

/** `amount`: `currency` and `amountValue`, both required. */
export const AMOUNT = {
  type: "object",
  required: ["currency", "amount"],
  properties: {
    currency: CURRENCY_CODE,
    amount: { type: "string", pattern: "-?[0-9]{1,14}(\\.[0-9]{1,3})?" },
  },
};

/** `otherType`: a proprietary account id, `identification` required. */
export const OTHER_TYPE = {
  type: "object",
  required: ["identification"],
  properties: {
    identification: string(35),
    schemeNameCode: string(35),
    schemeNameProprietary: string(35),
    issuer: string(35),
  },
};

/** `accountReference`: no field required, none excluded by another in the file. */
export const ACCOUNT_REFERENCE = {
  type: "object",
  properties: {
    iban: { type: "string", pattern: "[A-Z]{2,2}[0-9]{2,2}[a-zA-Z0-9]{1,30}" },
    bban: { type: "string", pattern: "[a-zA-Z0-9]{1,30}" },
    pan: string(35),
    maskedPan: string(35),
    msisdn: string(35),
    other: OTHER_TYPE,
    currency: CURRENCY_CODE,
    cashAccountType: string(),
  },
};

/** `confirmationOfFunds`: the request body of `checkAvailabilityOfFunds`. */
export const CONFIRMATION_OF_FUNDS = {
  type: "object",
  required: ["account", "instructedAmount"],
  properties: {
    cardNumber: string(35),
    account: ACCOUNT_REFERENCE,
    payee: string(70),
    instructedAmount: AMOUNT,
  },
};

/** The body of `OK_200_ConfirmationOfFunds`: `fundsAvailable`, a boolean, required. */
export const CONFIRMATION_OF_FUNDS_200 = {
  type: "object",
  required: ["fundsAvailable"],
  properties: { fundsAvailable: { type: "boolean" } },
};
