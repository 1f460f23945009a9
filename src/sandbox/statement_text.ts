/**
 * The bank statement text of a checkout order (001, `show_shop_order_id_on_extract`).
 *
 * Exact rule implemented: take the `description` of every item that has a string description,
 * in order, join them with "," (a comma, no space), and keep the first 25 symbols, counted as
 * Unicode code points so Georgian letters count one each. When `show_shop_order_id_on_extract`
 * is `true` and `shop_order_id` is a non-empty string, the text is `shop_order_id`, one space,
 * then those 25 symbols (the prefix does not count towards the 25).
 */
import { isObject } from "./request.ts";

/** Symbols of the item descriptions kept on the statement. */
export const STATEMENT_SYMBOLS = 25;

/**
 * The statement text of an order request body.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { statementText } from "./statement_text.ts";
 *
 * assert.equal(
 *   statementText({ items: [{ description: "Phone" }, { description: "Case" }] }),
 *   "Phone,Case",
 * );
 * ```
 */
export function statementText(order: Record<string, unknown>): string {
  const items = Array.isArray(order.items) ? order.items : [];
  const descriptions = items.flatMap((item) =>
    isObject(item) && typeof item.description === "string" ? [item.description] : []
  );
  const text = Array.from(descriptions.join(",")).slice(0, STATEMENT_SYMBOLS).join("");
  const shopOrderId = order.shop_order_id;
  const prefixed = order.show_shop_order_id_on_extract === true &&
    typeof shopOrderId === "string" && shopOrderId !== "";
  return prefixed ? `${shopOrderId} ${text}` : text;
}
