/**
 * `service`: whether the bank offers an operation. A bank that does not offer a service (card
 * accounts, confirmation of funds, signing baskets, or any other group or operation) sets
 * `service.offered: false` on its group; the gateway then answers the standard's error for a
 * service the ASPSP does not support, 405 SERVICE_INVALID (as the Berlin Group implementation
 * answers a signing basket its bank does not offer), before any other check or the core sees the
 * request.
 */
import { z } from "zod";
import { defineCheck } from "../src/core/check.ts";
import { GatewayError } from "../src/psd2/errors.ts";

export const service = defineCheck({
  key: "service",
  description: "Answers 405 SERVICE_INVALID for the operations the bank does not offer",
  options: z.object({
    offered: z.boolean().default(true).describe(
      "Whether the bank offers the operation; false answers 405 SERVICE_INVALID at the edge",
    ),
  }).strict(),
  create(options, { operation }) {
    if (options.offered) return undefined;
    const text = `The ASPSP does not offer this service (${operation.group}: ${operation.id})`;
    return () => {
      throw new GatewayError(405, "SERVICE_INVALID", text);
    };
  },
});
