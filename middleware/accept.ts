/**
 * `accept`: an Accept header the operation cannot satisfy is refused with 406
 * REQUESTED_FORMATS_INVALID. Every answer of the interface is JSON; the payment of a `pain.001-*`
 * product may also be read as XML. On the way out, the messages of a 2xx JSON answer take the form
 * the official OpenAPI file gives them (`success_messages`, `_success_messages.ts`), so that a
 * client generated from that file reads them.
 */
import { z } from "zod";
import { defineCheck, type GatewayContext, type Middleware, modal } from "../src/core/check.ts";
import { requestHeaders } from "../src/core/request.ts";
import { GatewayError } from "../src/psd2/errors.ts";
import { acceptable } from "../src/lib/media_type.ts";
import { mediaType } from "../src/lib/fields.ts";
import { type Answer, answerJson, changed } from "../src/core/answer.ts";
import { GENERIC_MESSAGE_OPERATIONS, officialSuccessMessages } from "./_success_messages.ts";

/** A 2xx JSON answer's messages in the official form, when they are not already. */
function successMessages(answer: Answer): Answer | undefined {
  if (answer.status < 200 || answer.status > 299) return undefined;
  const official = officialSuccessMessages(answerJson(answer));
  return official && changed(answer, { body: JSON.stringify(official) });
}

export const accept = defineCheck({
  key: "accept",
  description: "Accept must allow a format the operation answers in (JSON): 406",
  options: modal({
    media_types: z.array(mediaType()).min(1).default(["application/json"]).describe(
      "Media types the bank answers in (lower case)",
    ),
    success_messages: z.enum(["official", "as_sent"]).default("official").describe(
      'tppMessages of a 2xx answer: official: as the Berlin Group\'s OpenAPI file types them (a code other than ERROR or WARNING becomes the category, and leads the text: "FUNDS_NOT_AVAILABLE: ..."); as_sent: as the core sent them',
    ),
  }),
  create(options, { operation }) {
    const readsPayment = operation.id === "getPaymentInformation";
    const answer = options.success_messages === "official" &&
        GENERIC_MESSAGE_OPERATIONS.has(operation.id)
      ? (_c: GatewayContext, made: Answer) => successMessages(made)
      : undefined;
    const request: Middleware = (c, next) => {
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
    return answer ? { request, answer } : request;
  },
});
