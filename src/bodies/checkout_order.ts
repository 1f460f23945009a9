/**
 * The checkout order request body (001): intent, items, purchase_units and redirect_url required;
 * locale, shop_order_id, show_shop_order_id_on_extract and capture_method optional. The currency
 * of purchase units is always GEL. Free text here is shop text (any language), so the interface
 * character set of the other document does not apply. Amounts follow one rule (string or number,
 * `merchant_amount.ts`), the locale either spelling (`locale.ts`), and the purchase units add up
 * to the items (amount × quantity).
 */
import { z } from "zod";
import { amountNumber, amountText, merchantAmount, tetri } from "./merchant_amount.ts";
import { checkoutLocale, LOCALE_SPELLINGS } from "./locale.ts";
import { absoluteUrl, type BodyOptions, bounded, MAX_LIST, object } from "./text.ts";

/** The body of a checkout order. */
export function checkoutOrder(options: BodyOptions) {
  const item = object({
    amount: merchantAmount({ positive: false }),
    description: bounded(255),
    quantity: z.int().min(1),
    product_id: bounded(100),
  }, options);
  const unit = object({
    amount: object({
      currency_code: z.literal("GEL"),
      value: merchantAmount({ positive: true }),
    }, options),
  }, options);
  return object({
    intent: z.enum(["CAPTURE", "AUTHORIZE"]),
    items: z.array(item).min(1).max(MAX_LIST),
    locale: z.enum(LOCALE_SPELLINGS as [string, ...string[]]).optional(),
    shop_order_id: bounded(100).optional(),
    redirect_url: absoluteUrl(options),
    show_shop_order_id_on_extract: z.boolean().optional(),
    capture_method: z.enum(["AUTOMATIC", "MANUAL"]).optional(),
    purchase_units: z.array(unit).min(1).max(10),
  }, options);
}

interface Item {
  amount: string | number;
  quantity: number;
  [field: string]: unknown;
}

interface Unit {
  amount: { value: string | number; [field: string]: unknown };
  [field: string]: unknown;
}

/** A checkout order that passed {@link checkoutOrder}. */
export interface CheckoutOrder {
  items: Item[];
  purchase_units: Unit[];
  locale?: string;
  [field: string]: unknown;
}

/** When the purchase units do not add up to the items (amount × quantity): both totals. */
export function totalsDiffer(order: CheckoutOrder): { items: string; units: string } | undefined {
  let items = 0n;
  for (const item of order.items) items += tetri(item.amount)! * BigInt(item.quantity);
  let units = 0n;
  for (const unit of order.purchase_units) units += tetri(unit.amount.value)!;
  return items === units ? undefined : { items: amountText(items), units: amountText(units) };
}

/**
 * The order in the forms the core expects (001): the checkout's locale spelling, an item's amount
 * as a string, a purchase unit's value as a number; undefined when it is already so. Every other
 * field stays as sent.
 */
export function orderForCore(order: CheckoutOrder): CheckoutOrder | undefined {
  let changed = false;
  const items = order.items.map((item) => {
    if (typeof item.amount === "string") return item;
    changed = true;
    return { ...item, amount: amountText(tetri(item.amount)!) };
  });
  const units = order.purchase_units.map((unit) => {
    if (typeof unit.amount.value === "number") return unit;
    changed = true;
    return { ...unit, amount: { ...unit.amount, value: amountNumber(tetri(unit.amount.value)!) } };
  });
  const locale = order.locale === undefined ? undefined : checkoutLocale(order.locale);
  if (locale !== order.locale) changed = true;
  if (!changed) return undefined;
  return {
    ...order,
    items,
    purchase_units: units,
    ...(locale === undefined ? {} : { locale }),
  };
}
