/**
 * The parts of the official Berlin Group OpenAPI file (NextGenPSD2 1.3.11, as adorsys XS2A ships
 * it: `xs2a-impl/src/main/resources/static/psd2-api_v1.3.11-2021-10-01v1.yaml`) that the error and
 * message tests validate against, transcribed as JSON Schema under the file's own names: the
 * message of a success answer (`tppMessageGeneric`, whose `code` the file types as the category),
 * the payment status answer, and the error body of every status (`Error4xx_NG_*`: messages with a
 * category and a code, an optional path and text of at most 500 characters, and `_links`), and
 * the SCA status and authentication object that the SCA and basket tests share.
 */

const tppMessageCategory = { type: "string", enum: ["ERROR", "WARNING"] };
const tppMessageText = { type: "string", maxLength: 500 };

/** `scaStatus` */
export const SCA_STATUS = {
  type: "string",
  enum: [
    "received",
    "psuIdentified",
    "psuAuthenticated",
    "scaMethodSelected",
    "started",
    "unconfirmed",
    "finalised",
    "failed",
    "exempted",
  ],
};

/** `authenticationObject` */
export const AUTHENTICATION_OBJECT = {
  type: "object",
  required: ["authenticationType", "authenticationMethodId"],
  properties: {
    authenticationType: { type: "string" },
    authenticationVersion: { type: "string" },
    authenticationMethodId: { type: "string", maxLength: 35 },
    name: { type: "string" },
    explanation: { type: "string" },
  },
};

/** `tppMessageGeneric`: `code` refers to `tppMessageCategory` in the file. */
export const TPP_MESSAGE_GENERIC = {
  type: "object",
  required: ["category", "code"],
  properties: {
    category: tppMessageCategory,
    code: tppMessageCategory,
    path: { type: "string" },
    text: tppMessageText,
  },
};

/** `paymentInitiationStatusResponse-200_json` (its `_links` and status fields as open values). */
export const PAYMENT_STATUS_200 = {
  type: "object",
  required: ["transactionStatus"],
  properties: {
    transactionStatus: { type: "string" },
    fundsAvailable: { type: "boolean" },
    psuMessage: { type: "string", maxLength: 500 },
    _links: { type: "object" },
    tppMessages: { type: "array", items: TPP_MESSAGE_GENERIC },
  },
};

/**
 * The NextGenPSD2 error body (`Error400_NG_PIS`, `Error406_NG_AIS`, ...): each status's messages
 * are `tppMessage<status>_<service>` with the code of `MessageCode<status>_<service>`, a string in
 * 1.3.11 (the codes themselves are checked against the standard's table apart).
 */
export const ERROR_NG = {
  type: "object",
  required: ["tppMessages"],
  properties: {
    tppMessages: {
      type: "array",
      minItems: 1,
      items: {
        type: "object",
        required: ["category", "code"],
        properties: {
          category: tppMessageCategory,
          code: { type: "string" },
          path: { type: "string" },
          text: tppMessageText,
        },
      },
    },
    _links: { type: "object" },
  },
};
