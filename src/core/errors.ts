/**
 * The one error type of the gateway and its Berlin Group rendering.
 *
 * Every check throws a {@link GatewayError}; `renderError` is the only place that builds a
 * `tppMessages` body. Codes are the Berlin Group codes of the interface, plus a few of our own for
 * statuses the interface lists without a code list (408, 413, 415, 500, 503), documented in the
 * README.
 */

/** Berlin Group codes, and the gateway's own codes for statuses without a code list. */
export type ErrorCode =
  | "FORMAT_ERROR"
  | "PARAMETER_NOT_CONSISTENT"
  | "PARAMETER_NOT_SUPPORTED"
  | "SERVICE_INVALID"
  | "RESOURCE_UNKNOWN"
  | "RESOURCE_EXPIRED"
  | "RESOURCE_BLOCKED"
  | "TIMESTAMP_INVALID"
  | "PERIOD_INVALID"
  | "SCA_METHOD_UNKNOWN"
  | "SCA_INVALID"
  | "CONSENT_UNKNOWN"
  | "PAYMENT_FAILED"
  | "EXECUTION_DATE_INVALID"
  | "CERTIFICATE_INVALID"
  | "ROLE_INVALID"
  | "CERTIFICATE_EXPIRED"
  | "CERTIFICATE_BLOCKED"
  | "CERTIFICATE_REVOKED"
  | "CERTIFICATE_MISSING"
  | "SIGNATURE_INVALID"
  | "SIGNATURE_MISSING"
  | "CORPORATE_ID_INVALID"
  | "PSU_CREDENTIALS_INVALID"
  | "CONSENT_INVALID"
  | "CONSENT_EXPIRED"
  | "TOKEN_UNKNOWN"
  | "TOKEN_INVALID"
  | "TOKEN_EXPIRED"
  | "SERVICE_BLOCKED"
  | "PRODUCT_INVALID"
  | "PRODUCT_UNKNOWN"
  | "CANCELLATION_INVALID"
  | "REQUESTED_FORMATS_INVALID"
  | "STATUS_INVALID"
  | "ACCESS_EXCEEDED"
  // The gateway's own codes (statuses the interface lists without codes).
  | "REQUEST_TIMEOUT"
  | "PAYLOAD_TOO_LARGE"
  | "CONTENT_TYPE_INVALID"
  | "INTERNAL_ERROR"
  | "UPSTREAM_UNAVAILABLE"
  | "UPSTREAM_TIMEOUT"
  | "STORE_UNAVAILABLE";

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
 * throw new GatewayError(400, "FORMAT_ERROR", 'Header "X-Request-ID" must be a UUID', {
 *   path: "X-Request-ID",
 * });
 */
export class GatewayError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly path?: string;
  readonly headers?: Record<string, string>;

  constructor(status: number, code: ErrorCode, text: string, options: GatewayErrorOptions = {}) {
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

/** Renders an error as a response; unknown errors become a generic 500 with nothing internal. */
export function renderError(error: unknown, requestId?: string): Response {
  const known = error instanceof GatewayError
    ? error
    : new GatewayError(500, "INTERNAL_ERROR", "The gateway failed to process the request");
  const headers = new Headers(known.headers);
  headers.set("content-type", "application/json");
  headers.set("cache-control", "no-store");
  if (requestId) headers.set("x-request-id", requestId);
  return new Response(errorBody(known), { status: known.status, headers });
}
