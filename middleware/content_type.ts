/**
 * `content_type`: a request body comes with a Content-Type that fits the operation: JSON, or XML
 * for the `pain.001-*` payment products (and multipart/form-data for a periodic one, whose parts
 * `body_schema` judges); a charset other than UTF-8 is refused. Anything else is
 * 415 CONTENT_TYPE_INVALID (the interface lists 415 without a code). Where the interface requires
 * Content-Type even without a body (installment calculator, checkout), its absence is 400.
 */
import { z } from "zod";
import { defineCheck, modal } from "../src/core/check.ts";
import { type HeaderLookup } from "../src/lib/header_pairs.ts";
import { requestHeaders } from "../src/core/request.ts";
import { GatewayError } from "../src/psd2/errors.ts";
import { missingHeader, requires } from "./_headers.ts";
import { parseMediaType } from "../src/lib/media_type.ts";
import { mediaType } from "../src/lib/fields.ts";
import { FORM_DATA } from "../src/bodies/periodic_form.ts";

const mediaTypes = z.array(mediaType()).min(1);

/** Whether the request carries a body, judged from its framing headers. */
function hasBody(headers: HeaderLookup): boolean {
  const length = headers.get("content-length");
  return (length !== null && length !== "0") || headers.has("transfer-encoding");
}

export const contentType = defineCheck({
  key: "content_type",
  description: "Content-Type must fit the operation (JSON, or XML for pain.001 products): 415",
  options: modal({
    json_types: mediaTypes.default(["application/json"]).describe(
      "Media types accepted for JSON bodies (lower case)",
    ),
    xml_types: mediaTypes.default(["application/xml", "text/xml"]).describe(
      "Media types accepted for the XML bodies of pain.001-* payment products (lower case)",
    ),
  }),
  create(options, { operation }) {
    const required = requires(operation, "content-type");
    if (operation.body === "none" && !required) return undefined;
    const xmlCapable = operation.body === "payment";
    return (c, next) => {
      const headers = requestHeaders(c);
      const value = headers.get("content-type");
      if (value === null) {
        if (required) throw missingHeader("content-type", c);
        if (!hasBody(headers)) return next();
      }
      const params = c.get("params");
      const xml = xmlCapable && (params["payment-product"] ?? "").startsWith("pain.001-");
      const allowed = !xml
        ? options.json_types
        : params["payment-service"] === "periodic-payments"
        ? [...options.xml_types, FORM_DATA]
        : options.xml_types;
      const media = value === null ? undefined : parseMediaType(value);
      const charset = media?.params.get("charset")?.toLowerCase();
      if (!media || !allowed.includes(media.essence) || (charset && charset !== "utf-8")) {
        throw new GatewayError(
          415,
          "CONTENT_TYPE_INVALID",
          `Header "Content-Type" must be ${allowed.map((t) => `"${t}"`).join(" or ")}${
            xml ? " for a pain.001 payment product" : ""
          }, in UTF-8`,
          { path: "Content-Type" },
        );
      }
      return next();
    };
  },
});
