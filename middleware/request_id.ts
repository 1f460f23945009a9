/**
 * `request_id`: X-Request-ID is present where the catalogue requires it (every call of the
 * payment, account and consent interface) and, wherever it is sent, a UUID. Its uniqueness is the
 * idempotency check's business. Whatever the request sent, the answer carries a UUID (the access
 * log makes one when the request's is missing or invalid).
 */
import { defineCheck, modal } from "../src/core/check.ts";
import { requestHeaders } from "../src/core/request.ts";
import { headerError, missingHeader, requires, takes, UUID } from "./_headers.ts";

export const requestId = defineCheck({
  key: "request_id",
  description: "X-Request-ID is required where the interface says so and is a UUID",
  options: modal({}),
  create(_options, { operation }) {
    const required = requires(operation, "x-request-id");
    if (!required && !takes(operation, "x-request-id")) return undefined;
    return (c, next) => {
      const value = requestHeaders(c).get("x-request-id");
      if (value === null) {
        if (required) throw missingHeader("x-request-id", c);
      } else if (!UUID.test(value)) {
        const shown = value.length > 40 ? `${value.slice(0, 40)}...` : value;
        throw headerError(
          "x-request-id",
          `Header "X-Request-ID" must be a UUID like 99391c7e-ad88-49ec-a2ad-99ddcb1f7721, not ${
            JSON.stringify(shown)
          }`,
        );
      }
      return next();
    };
  },
});
