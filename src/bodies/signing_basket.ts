/**
 * The signing basket body (Berlin Group 1.3.11 `signingBasket`): the payment ids and consent ids
 * the PSU authorises together, each list with at least one id when present, and at least one id
 * in all. A basket holds at most `MAX_BASKET` ids: the standard leaves the bound to the bank
 * (adorsys XS2A's `signingBasketMaxEntries`), and the gateway checks each id's owner.
 */
import { z } from "zod";
import { type BodyOptions, object } from "./text.ts";
import { SAFE_ID } from "../lib/ids.ts";

/** Most ids one basket may carry. */
export const MAX_BASKET = 100;

const id = z.string().min(1).max(128).regex(SAFE_ID, {
  error: "must be an id of letters, digits and . _ ~ -",
});

/** A signing basket request. */
export function signingBasket(options: BodyOptions) {
  return object({
    paymentIds: z.array(id).min(1).max(MAX_BASKET).optional(),
    consentIds: z.array(id).min(1).max(MAX_BASKET).optional(),
  }, options).superRefine((basket, ctx) => {
    const count = (basket.paymentIds?.length ?? 0) + (basket.consentIds?.length ?? 0);
    if (count === 0) {
      ctx.addIssue({
        code: "custom",
        message: "must carry at least one of paymentIds, consentIds",
      });
    } else if (count > MAX_BASKET) {
      ctx.addIssue({ code: "custom", message: `must carry at most ${MAX_BASKET} ids in all` });
    }
  });
}
