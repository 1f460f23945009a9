/**
 * `path_params`: the path parameters of the operation. `payment-service` outside payments,
 * bulk-payments, periodic-payments is 400 PARAMETER_NOT_SUPPORTED; a `payment-product` the
 * interface does not know is 404 PRODUCT_UNKNOWN, one it knows but this bank does not offer is 403
 * PRODUCT_INVALID; a product catalogue `locale` is ge or en, or the checkout's spelling of the same
 * language (ka, en-US), which the core gets as ge or en; another is 400 PARAMETER_NOT_SUPPORTED.
 * Resource ids (paymentId, consentId, account-id, ...) have a bounded length and a character set
 * that cannot change the path the upstream sees: no slashes (encoded or not), no percent signs, no
 * dot segments, no controls.
 */
import { z } from "zod";
import { defineCheck, modal } from "../src/core/check.ts";
import { PAYMENT_PRODUCTS, templateParams } from "../src/psd2/catalogue.ts";
import { formatError, GatewayError } from "../src/psd2/errors.ts";
import { idProblem } from "../src/lib/ids.ts";
import { catalogueLocale } from "../src/bodies/locale.ts";

/** At most this much of a rejected value is quoted back. */
function shown(value: string): string {
  return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
}

export const pathParams = defineCheck({
  key: "path_params",
  description: "Path parameters: payment service and product, locale, and safe resource ids",
  options: modal({
    offered_products: z.array(z.enum(PAYMENT_PRODUCTS)).default(["aspsp", "domestic", "foreign"])
      .describe(
        "Payment products this bank offers; other known products get 403 PRODUCT_INVALID",
      ),
    max_id_length: z.number().int().min(1).max(1024).default(128).describe(
      "Longest resource id accepted in a path (paymentId, consentId, account-id, ...)",
    ),
  }),
  create(options, { operation }) {
    const names = templateParams(operation.path);
    if (names.length === 0) return undefined;
    const offered = new Set<string>(options.offered_products);
    const rules = names.map((name) => ({ name, values: operation.params[name]?.values }));
    return (c, next) => {
      let params = c.get("params");
      for (const { name, values } of rules) {
        const value = params[name] ?? "";
        if (name === "locale") {
          const locale = catalogueLocale(value);
          if (locale === undefined) {
            throw new GatewayError(
              400,
              "PARAMETER_NOT_SUPPORTED",
              `Path parameter "locale" must be one of ${values?.join(", ")} (or ka, en-US), not ${
                shown(value)
              }`,
              { path: name },
            );
          }
          // The core takes the catalogue's spelling; the proxy builds its path from the params.
          if (locale !== value) c.set("params", params = { ...params, locale });
        } else if (name === "payment-product") {
          if (!values?.includes(value)) {
            throw new GatewayError(
              404,
              "PRODUCT_UNKNOWN",
              `Payment product ${shown(value)} is not a product of the interface`,
              { path: name },
            );
          }
          if (!offered.has(value)) {
            throw new GatewayError(
              403,
              "PRODUCT_INVALID",
              `Payment product ${shown(value)} is not offered; offered: ${[...offered].join(", ")}`,
              { path: name },
            );
          }
        } else if (values) {
          if (!values.includes(value)) {
            throw new GatewayError(
              400,
              "PARAMETER_NOT_SUPPORTED",
              `Path parameter "${name}" must be one of ${values.join(", ")}, not ${shown(value)}`,
              { path: name },
            );
          }
        } else {
          const problem = idProblem(value, options.max_id_length);
          if (problem) throw formatError(name, `Path parameter "${name}" ${problem}`);
        }
      }
      return next();
    };
  },
});
