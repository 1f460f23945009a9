/**
 * The installment loan calculator of the legacy core (001, deprecated).
 *
 * Durations and discount types are assigned per merchant `client_id`. The monthly payment of a
 * ZERO offer is amount / months; a STANDARD offer is an annuity at 1.5 % a month
 * (amount * r / (1 - (1 + r)^-months)). Both round half up to the tetri.
 */
import type { Hono } from "hono";
import { formatError, resourceUnknown } from "./errors.ts";

/** Monthly interest rate of STANDARD offers. */
export const STANDARD_MONTHLY_RATE = 0.015;

/** Offers per merchant client_id: months per discount code. */
export const MERCHANTS: Readonly<Record<string, { ZERO: number[]; STANDARD: number[] }>> = {
  "merchant-a": { ZERO: [3, 6, 12], STANDARD: [6, 12, 24] },
  "merchant-b": { ZERO: [4, 10], STANDARD: [12, 18, 36] },
  "merchant-c": { ZERO: [], STANDARD: [6, 12, 18, 24] },
};

/** One offer of the calculator. */
export interface InstallmentOffer {
  month: number;
  amount: string;
  discount_code: "ZERO" | "STANDARD";
}

/**
 * The offers of a merchant for an amount in tetri (ZERO first, then STANDARD, by months).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { installmentOffers } from "./installment.ts";
 *
 * assert.deepEqual(installmentOffers("merchant-a", 120000)[0], {
 *   month: 3,
 *   amount: "400.00",
 *   discount_code: "ZERO",
 * });
 * ```
 */
export function installmentOffers(clientId: string, tetri: number): InstallmentOffer[] {
  const merchant = MERCHANTS[clientId];
  if (!merchant) return [];
  const zero = merchant.ZERO.map((month) => ({
    month,
    amount: formatTetri(Math.round(tetri / month)),
    discount_code: "ZERO" as const,
  }));
  const r = STANDARD_MONTHLY_RATE;
  const standard = merchant.STANDARD.map((month) => ({
    month,
    amount: formatTetri(Math.round((tetri * r) / (1 - Math.pow(1 + r, -month)))),
    discount_code: "STANDARD" as const,
  }));
  return [...zero, ...standard];
}

/** Mounts the calculator route on the app. */
export function mountInstallment(app: Hono) {
  app.get("/v1/services/installment/calculate", (c) => {
    const amount = c.req.query("amount") ?? "";
    const clientId = c.req.query("client_id") ?? "";
    if (!/^\d{1,9}(\.\d{1,2})?$/.test(amount) || Number(amount) <= 0) {
      throw formatError('Query "amount" must be a positive decimal like 1200.50', "amount");
    }
    if (clientId === "") throw formatError('Query "client_id" is missing', "client_id");
    if (!Object.hasOwn(MERCHANTS, clientId)) throw resourceUnknown("Merchant", "client_id");
    return c.json(installmentOffers(clientId, Math.round(Number(amount) * 100)));
  });
}

function formatTetri(tetri: number): string {
  return `${Math.floor(tetri / 100)}.${String(tetri % 100).padStart(2, "0")}`;
}
