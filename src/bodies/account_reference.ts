/**
 * accountReference: an account named by exactly one of iban, bban, pan, maskedPan, msisdn or
 * other, with an optional currency and cash account type. An IBAN must match the interface's
 * pattern and pass the ISO 13616 mod-97 check.
 */
import { z } from "zod";
import { currency } from "./amount.ts";
import { type BodyOptions, bounded, object } from "./text.ts";

/** The interface's IBAN pattern. */
export const IBAN = /^[A-Z]{2}[0-9]{2}[a-zA-Z0-9]{1,30}$/;

/** The fields that identify an account; a reference has exactly one. */
export const IDENTIFIERS = ["iban", "bban", "pan", "maskedPan", "msisdn", "other"] as const;

/** The ISO 13616 check: the IBAN, rotated and with letters as numbers, is 1 modulo 97. */
export function ibanChecksumValid(iban: string): boolean {
  const rotated = (iban.slice(4) + iban.slice(0, 4)).toUpperCase();
  if (ALNUM.test(rotated)) return mod97(rotated) === 1;
  let remainder = 0;
  for (const ch of rotated) {
    const code = ch.charCodeAt(0);
    const digits = code >= 65 ? String(code - 55) : ch;
    for (const digit of digits) remainder = (remainder * 10 + Number(digit)) % 97;
  }
  return remainder === 1;
}

const ALNUM = /^[A-Z0-9]*$/;

/**
 * The remainder modulo 97 of capital letters and digits read as a number, each letter as two
 * digits (A = 10 ... Z = 35), without a string per character.
 */
function mod97(text: string): number {
  let remainder = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    remainder = code >= 65 ? (remainder * 100 + code - 55) % 97 : (remainder * 10 + code - 48) % 97;
  }
  return remainder;
}

function iban() {
  return z.string().superRefine((value, ctx) => {
    if (!IBAN.test(value)) {
      ctx.addIssue({
        code: "custom",
        message: "must be an IBAN in electronic form (no spaces), like DE89370400440532013000",
      });
    } else if (!ibanChecksumValid(value)) {
      ctx.addIssue({ code: "custom", message: "must be an IBAN with valid check digits" });
    }
  });
}

/** An accountReference schema. */
export function accountReference(options: BodyOptions) {
  return object({
    iban: iban().optional(),
    bban: z.string().regex(/^[a-zA-Z0-9]{1,30}$/, {
      error: "must be 1 to 30 letters and digits",
    }).optional(),
    pan: bounded(35).optional(),
    maskedPan: bounded(35).optional(),
    msisdn: bounded(35).optional(),
    other: object({
      identification: bounded(35),
      schemeNameCode: bounded(35).optional(),
      schemeNameProprietary: bounded(70).optional(),
      issuer: bounded(35).optional(),
    }, options).optional(),
    currency: currency().optional(),
    cashAccountType: bounded(35).optional(),
  }, options).superRefine((reference, ctx) => {
    const named = IDENTIFIERS.filter((key) => reference[key] !== undefined);
    if (named.length !== 1) {
      ctx.addIssue({
        code: "custom",
        message: `must name the account by exactly one of ${IDENTIFIERS.join(", ")}${
          named.length > 1 ? ` (got ${named.join(", ")})` : ""
        }`,
      });
    }
  });
}
