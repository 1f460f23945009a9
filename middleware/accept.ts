/**
 * `accept`: an Accept header the operation cannot satisfy is refused with 406
 * REQUESTED_FORMATS_INVALID. Every answer of the interface is JSON; the payment of a `pain.001-*`
 * product may also be read as XML.
 */
import { z } from "zod";
import { defineCheck, modal } from "../src/core/check.ts";
import { requestHeaders } from "../src/core/request.ts";
import { GatewayError } from "../src/psd2/errors.ts";
import { acceptable } from "../src/lib/media_type.ts";
import { mediaType } from "../src/lib/fields.ts";

export const accept = defineCheck({
  key: "accept",
  description: "Accept must allow a format the operation answers in (JSON): 406",
  options: modal({
    media_types: z.array(mediaType()).min(1).default(["application/json"]).describe(
      "Media types the bank answers in (lower case)",
    ),
  }),
  create(options, { operation }) {
    const readsPayment = operation.id === "getPaymentInformation";
    return (c, next) => {
      const value = requestHeaders(c).get("accept");
      if (value === null) return next();
      const produced = readsPayment &&
          (c.get("params")["payment-product"] ?? "").startsWith("pain.001-")
        ? [...options.media_types, "application/xml"]
        : options.media_types;
      if (!acceptable(value, produced)) {
        throw new GatewayError(
          406,
          "REQUESTED_FORMATS_INVALID",
          `Header "Accept" must allow ${produced.map((t) => `"${t}"`).join(" or ")}`,
          { path: "Accept" },
        );
      }
      return next();
    };
  },
});
