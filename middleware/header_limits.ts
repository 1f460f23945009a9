/**
 * `header_limits`: length caps per header (PSU-ID and friends 50, redirect URIs 500, brand
 * logging 255), a cap on any one header and on all headers together, and no control characters
 * in any header value but TAB (RFC 9110 allows it inside a field value, as it allows spaces).
 * These apply to every header of every operation. A header the interface
 * says may be ignored is dropped when it breaks a rule, not rejected (policy `ignorable`).
 */
import { z } from "zod";
import { defineCheck, modal } from "../src/core/check.ts";
import { headerList } from "../src/core/request.ts";
import { displayName, headerError, headerViolation, ignorableField } from "./_headers.ts";
import { formatError } from "../src/psd2/errors.ts";
import { hasC0, hasControl } from "../src/lib/controls.ts";
import { utf8 } from "../src/lib/utf8.ts";
import { byteSize, headerName } from "../src/lib/fields.ts";

/** Caps used in practice for the interface's headers (characters). */
export const DEFAULT_CAPS: Record<string, number> = {
  "psu-id": 50,
  "psu-id-type": 50,
  "psu-corporate-id": 50,
  "psu-corporate-id-type": 50,
  "tpp-redirect-uri": 500,
  "tpp-nok-redirect-uri": 500,
  "tpp-brand-logging-information": 255,
};

/** Printable ASCII and TAB. */
const ASCII = /^[\t -~]*$/;

/**
 * What is wrong with the characters of a header value, or `undefined`. Values arrive as Latin-1
 * byte strings: non-ASCII bytes are read as UTF-8 when they are valid UTF-8, so that the bytes of
 * a UTF-8 character are not mistaken for C1 controls.
 */
export function characterProblem(value: string, asciiOnly: boolean): string | undefined {
  if (ASCII.test(value)) return undefined;
  const untabbed = value.includes("\t") ? value.replaceAll("\t", " ") : value;
  if (hasC0(untabbed)) return "must not contain control characters";
  if (asciiOnly) return "must contain printable ASCII characters only";
  // A value that is not UTF-8 is judged as Latin-1.
  const text = utf8(latin1Bytes(untabbed)) ?? untabbed;
  return hasControl(text) ? "must not contain control characters" : undefined;
}

/**
 * The length of a header value in characters: a UTF-8 value counts its code points (a Georgian
 * letter is one character, not three bytes); other values count one per byte.
 */
export function characterLength(value: string): number {
  if (ASCII.test(value)) return value.length;
  const text = utf8(latin1Bytes(value));
  if (text === undefined) return value.length;
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/** The bytes of a Latin-1 byte string, as header values arrive. */
function latin1Bytes(value: string): Uint8Array {
  return Uint8Array.from(value, (ch) => ch.charCodeAt(0));
}

export const headerLimits = defineCheck({
  key: "header_limits",
  description: "Length caps per header and overall; no control characters in header values",
  options: modal({
    caps: z.record(headerName(), z.number().int().positive()).default(
      DEFAULT_CAPS,
    ).describe(
      "Longest value per header name, in characters (replaces the whole default map when set)",
    ),
    max_header_bytes: byteSize().default(16_384).describe(
      "Longest value of any other header, in bytes (a signature with a certificate chain needs several kilobytes)",
    ),
    max_total_bytes: byteSize().default(65_536).describe(
      "Largest size of all header names and values together, in bytes",
    ),
    ascii_only: z.boolean().default(false).describe(
      "Refuse any non-ASCII byte in header values (otherwise UTF-8 text is let through, controls never)",
    ),
    ignorable: ignorableField(),
  }),
  create(options, { report }) {
    const caps = new Map(
      Object.entries(options.caps).map(([name, cap]) => [name.toLowerCase(), cap]),
    );
    const check = { report, options };
    return (c, next) => {
      let total = 0;
      for (const [name, value] of headerList(c)) {
        total += name.length + value.length;
        const capped = caps.get(name);
        const cap = capped ?? options.max_header_bytes;
        const unit = capped === undefined ? "bytes" : "characters";
        // A value has at most as many characters as bytes: count them only past the cap.
        const over = value.length > cap && (capped === undefined || characterLength(value) > cap);
        const problem = over
          ? `must have at most ${cap} ${unit}`
          : characterProblem(value, options.ascii_only);
        if (problem) {
          headerViolation(
            c,
            check,
            name,
            headerError(name, `Header "${displayName(name)}" ${problem}`),
          );
        }
      }
      if (total > options.max_total_bytes) {
        throw formatError(
          "headers",
          `The request headers must not exceed ${options.max_total_bytes} bytes in total`,
        );
      }
      return next();
    };
  },
});
