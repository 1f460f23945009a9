/**
 * The checkout order request body (001): intent, items, purchase_units and redirect_url required;
 * locale, shop_order_id, show_shop_order_id_on_extract and capture_method optional. The currency
 * of purchase units is always GEL. Free text here is shop text (any language), so the interface
 * character set of the other document does not apply.
 */
import { z } from "zod";
import { decimal } from "./amount.ts";
import { absoluteUrl, type BodyOptions, bounded, MAX_LIST, object } from "./text.ts";

/** The body of a checkout order. */
export function checkoutOrder(options: BodyOptions) {
  const item = object({
    amount: decimal({ positive: false }).refine((value) => !value.startsWith("-"), {
      error: "must not be negative",
    }),
    description: bounded(255),
    quantity: z.int().min(1),
    product_id: bounded(100),
  }, options);
  const unit = object({
    amount: object({
      currency_code: z.literal("GEL"),
      value: z.number().positive().max(1e14).refine(
        (value) => Math.round(value * 100) === Number((value * 100).toFixed(6)),
        { error: "must have at most two decimals" },
      ),
    }, options),
  }, options);
  return object({
    intent: z.enum(["CAPTURE", "AUTHORIZE"]),
    items: z.array(item).min(1).max(MAX_LIST),
    locale: z.enum(["ka", "en-US"]).optional(),
    shop_order_id: bounded(100).optional(),
    redirect_url: absoluteUrl(options),
    show_shop_order_id_on_extract: z.boolean().optional(),
    capture_method: z.enum(["AUTOMATIC", "MANUAL"]).optional(),
    purchase_units: z.array(unit).min(1).max(10),
  }, options);
}
