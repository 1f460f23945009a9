/**
 * Authorisation request bodies: empty (no body, `null` or `{}`: update PSU identification), or
 * exactly one of update PSU authentication (`psuData`), select authentication method
 * (`authenticationMethodId`) and transaction authorisation (`scaAuthenticationData`); on PUT also
 * authorisation confirmation (`confirmationCode`). The interface does not show their fields; these
 * are the Berlin Group ones. Passwords and codes are not held to the interface character set.
 */
import { z } from "zod";
import { type BodyOptions, bounded, object } from "./text.ts";

/** The request types, by their field. */
const TYPES = ["psuData", "authenticationMethodId", "scaAuthenticationData", "confirmationCode"];

/** An authorisation body; `update` for PUT (adds authorisationConfirmation). */
export function authorisation(options: BodyOptions, update: boolean) {
  const psuData = object({
    password: bounded(512).optional(),
    encryptedPassword: bounded(4096).optional(),
    additionalPassword: bounded(512).optional(),
    additionalEncryptedPassword: bounded(4096).optional(),
  }, options).refine((value) => Object.values(value).some((v) => v !== undefined), {
    error:
      "must carry password, encryptedPassword, additionalPassword or additionalEncryptedPassword",
  });
  const shape = {
    psuData: psuData.optional(),
    authenticationMethodId: bounded(35).optional(),
    scaAuthenticationData: bounded(512).optional(),
    ...(update ? { confirmationCode: bounded(512).optional() } : {}),
  };
  const allowed = update ? TYPES : TYPES.slice(0, 3);
  return z.null().or(
    object(shape, options).superRefine((value, ctx) => {
      const present = allowed.filter((key) =>
        (value as Record<string, unknown>)[key] !== undefined
      );
      if (present.length > 1) {
        ctx.addIssue({
          code: "custom",
          message: `must carry at most one of ${allowed.join(", ")} (got ${present.join(", ")})`,
        });
      }
    }),
  );
}
