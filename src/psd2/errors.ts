/**
 * The one error type of the gateway and its Berlin Group rendering.
 *
 * Every check throws a {@link GatewayError}; `errorBody` is the only place that builds a
 * `tppMessages` body (src/core/answer.ts makes it the answer). Codes are the Berlin Group codes the standard defines for the error's status,
 * plus a few of our own for statuses it gives no code list (408, 413, 415, 500, 503), documented in
 * docs/interoperability.md.
 */

/**
 * The codes the Berlin Group standard defines per HTTP status (NextGenPSD2 1.3.x; the service
 * each code belongs to in the comments). A {@link GatewayError} takes only a code of its status:
 * the compiler refuses `new GatewayError(401, "FORMAT_ERROR", ...)`.
 */
export const STANDARD_CODES = {
  400: [
    "FORMAT_ERROR",
    "PARAMETER_NOT_CONSISTENT",
    "PARAMETER_NOT_SUPPORTED",
    "SERVICE_INVALID",
    "RESOURCE_UNKNOWN",
    "RESOURCE_EXPIRED",
    "RESOURCE_BLOCKED",
    "TIMESTAMP_INVALID",
    "PERIOD_INVALID",
    "SCA_METHOD_UNKNOWN",
    "SCA_INVALID",
    "CONSENT_UNKNOWN",
    // PIS only.
    "PAYMENT_FAILED",
    "EXECUTION_DATE_INVALID",
  ],
  401: [
    "CERTIFICATE_INVALID",
    "ROLE_INVALID",
    "CERTIFICATE_EXPIRED",
    "CERTIFICATE_BLOCKED",
    "CERTIFICATE_REVOKED",
    "CERTIFICATE_MISSING",
    "SIGNATURE_INVALID",
    "SIGNATURE_MISSING",
    "CORPORATE_ID_INVALID",
    "PSU_CREDENTIALS_INVALID",
    "CONSENT_INVALID",
    "CONSENT_EXPIRED",
    "TOKEN_UNKNOWN",
    "TOKEN_INVALID",
    "TOKEN_EXPIRED",
  ],
  // PRODUCT_INVALID: PIS only.
  403: [
    "CONSENT_UNKNOWN",
    "SERVICE_BLOCKED",
    "RESOURCE_UNKNOWN",
    "RESOURCE_EXPIRED",
    "PRODUCT_INVALID",
  ],
  // PRODUCT_UNKNOWN: PIS only.
  404: ["RESOURCE_UNKNOWN", "PRODUCT_UNKNOWN"],
  // CANCELLATION_INVALID: payment cancellation only.
  405: ["SERVICE_INVALID", "CANCELLATION_INVALID"],
  406: ["REQUESTED_FORMATS_INVALID"],
  409: ["STATUS_INVALID"],
  429: ["ACCESS_EXCEEDED"],
} as const;

/**
 * The gateway's own codes, for statuses the interface lists without a code list (408, 415, 500,
 * 503) or does not list (413). Each names the HTTP condition, in the standard's style, and is
 * documented in docs/interoperability.md ("Error codes").
 */
export const OWN_CODES = {
  408: ["REQUEST_TIMEOUT"],
  413: ["PAYLOAD_TOO_LARGE"],
  415: ["CONTENT_TYPE_INVALID"],
  500: ["INTERNAL_ERROR"],
  503: ["UPSTREAM_UNAVAILABLE", "UPSTREAM_TIMEOUT", "STORE_UNAVAILABLE"],
} as const;

/** Every code the gateway may answer with, by status. */
export const CODES: typeof STANDARD_CODES & typeof OWN_CODES = { ...STANDARD_CODES, ...OWN_CODES };

/** The statuses a {@link GatewayError} may have. */
export type ErrorStatus = keyof typeof CODES;

/** The codes of one status. */
export type CodeFor<S extends ErrorStatus> = (typeof CODES)[S][number];

/** Berlin Group codes, and the gateway's own codes for statuses without a code list. */
export type ErrorCode = CodeFor<ErrorStatus>;

/** Options of a {@link GatewayError} beyond status and code. */
export interface GatewayErrorOptions {
  /** The offending header, parameter or JSON path. */
  path?: string;
  /** Extra response headers, for example `Allow` or `Retry-After`. */
  headers?: Record<string, string>;
}

/**
 * A request error with a Berlin Group code, thrown by any check.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { errorBody, GatewayError } from "./errors.ts";
 *
 * const error = new GatewayError(400, "FORMAT_ERROR", 'Header "X-Request-ID" must be a UUID', {
 *   path: "X-Request-ID",
 * });
 * assert.equal(error.status, 400);
 * assert.equal(JSON.parse(errorBody(error)).tppMessages[0].path, "X-Request-ID");
 * ```
 */
export class GatewayError<S extends ErrorStatus = ErrorStatus> extends Error {
  readonly status: S;
  readonly code: CodeFor<S>;
  readonly path?: string;
  readonly headers?: Record<string, string>;

  constructor(status: S, code: CodeFor<S>, text: string, options: GatewayErrorOptions = {}) {
    super(text.length > 500 ? text.slice(0, 497) + "..." : text);
    this.name = "GatewayError";
    this.status = status;
    this.code = code;
    this.path = options.path;
    this.headers = options.headers;
  }
}

/** Shorthand for the most common rejection: 400 FORMAT_ERROR naming what is wrong. */
export function formatError(path: string, text: string): GatewayError {
  return new GatewayError(400, "FORMAT_ERROR", text, { path });
}

/** The Berlin Group error body of one error. */
export function errorBody(error: GatewayError): string {
  const message: Record<string, string> = { category: "ERROR", code: error.code };
  if (error.path !== undefined) message.path = error.path;
  message.text = error.message;
  return JSON.stringify({ tppMessages: [message] });
}
