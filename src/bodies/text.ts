/**
 * Building blocks of the body schemas: objects that reject or let through unknown fields, free
 * text in the interface character set, dates and URLs, all with phrases for the error text.
 */
import { z } from "zod";
import { isIsoDate } from "../lib/dates.ts";

/** An RFC 3339 date-time with a UTC offset or Z (ISODateTime of the Berlin Group). */
const DATE_TIME =
  /^(\d{4}-\d{2}-\d{2})T([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d{1,9})?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$/i;

/** How the body schemas are built, from the `body_schema` options. */
export interface BodyOptions {
  /** Unknown fields: reject them, or let them through to the upstream. */
  unknown: "reject" | "forward";
  /** The characters free text may use (see {@link TEXT_CHARSETS}). */
  charset: TextCharset;
  /** Largest number of payments in a bulk payment. */
  maxBulk: number;
  /** http URLs are accepted where https ones are expected (sandbox). */
  allowHttp: boolean;
}

/** The interface character set for strings (000, "What the service does"). */
export const INTERFACE_CHARSET = /^[a-zA-Z0-9/\-?:().,'+ ]*$/;

/**
 * The character sets free text may be held to: `interface`, the documents' set (the default);
 * `latin`, that set with `& # @` and Latin letters with accents (Latin-1, Latin Extended-A, -B and
 * Additional, or a letter with combining accents U+0300-U+036F), for names like "Smith & Co" or "Müller GmbH"; `unicode`, any
 * printable text in any script (letters, marks, digits, punctuation, symbols, spaces), never
 * control, format (bidirectional overrides, zero-width), private-use, unassigned or lone
 * surrogate characters, nor line or paragraph separators; `off`, no rule of characters.
 */
export const TEXT_CHARSETS = {
  interface: {
    pattern: INTERFACE_CHARSET,
    error: "must use only the interface character set: a-z A-Z 0-9 / - ? : ( ) . , ' + and space",
  },
  latin: {
    // Basic Latin, Latin-1 letters (not × ÷), Latin Extended-A and -B, Latin Extended
    // Additional, and the combining accents.
    pattern:
      /^[a-zA-Z\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u024F\u1E00-\u1EFF\u0300-\u036F0-9/\-?:().,'+ &#@]*$/,
    error: "must use only Latin letters (accented too), 0-9 / - ? : ( ) . , ' + & # @ and space",
  },
  unicode: {
    pattern: /^[\p{L}\p{M}\p{N}\p{P}\p{S}\p{Zs}]*$/u,
    error: "must be printable text: no control, format, private-use or unassigned characters",
  },
} as const;

/** A character set of free text, or `off`. */
export type TextCharset = keyof typeof TEXT_CHARSETS | "off";

/** The policy's `interface_charset` as a {@link TextCharset}: true is `interface`, false `off`. */
export function textCharset(option: boolean | keyof typeof TEXT_CHARSETS | undefined): TextCharset {
  return option === undefined || option === true ? "interface" : option === false ? "off" : option;
}

/** Longest list of account references or items accepted in a body. */
export const MAX_LIST = 1000;

/** A strict or loose object, as the policy says. */
export function object<Shape extends z.ZodRawShape>(shape: Shape, options: BodyOptions) {
  return options.unknown === "reject" ? z.strictObject(shape) : z.looseObject(shape);
}

/** Free text of at most `max` characters, in the policy's character set. */
export function text(max: number, options: BodyOptions) {
  const base = z.string().min(1).max(max);
  if (options.charset === "off") return base;
  const { pattern, error } = TEXT_CHARSETS[options.charset];
  return base.regex(pattern, { error });
}

/** A non-empty string of at most `max` characters (codes, ids, secrets: no character set). */
export function bounded(max: number) {
  return z.string().min(1).max(max);
}

/** An ISO 8601 calendar date. */
export function isoDate() {
  return z.string().refine(isIsoDate, { error: "must be a date like 2025-12-31" }).meta({
    format: "date",
  });
}

/** An ISO 8601 date-time with a time zone, like 2025-12-31T14:30:00+04:00 (RFC 3339). */
export function isoDateTime() {
  return z.string().refine(
    (value) => {
      const match = DATE_TIME.exec(value);
      return match !== null && isIsoDate(match[1]);
    },
    { error: "must be a date-time with a time zone, like 2025-12-31T14:30:00+04:00" },
  ).meta({ format: "date-time" });
}

/** An absolute https URL (http too when the policy allows it). */
export function absoluteUrl(options: BodyOptions) {
  const schemes = options.allowHttp ? ["https:", "http:"] : ["https:"];
  return z.string().max(2048).refine((value) => {
    if (!/^[!-~]+$/.test(value) || !/^https?:\/\/[^/?#]/i.test(value)) return false;
    const url = URL.parse(value);
    return url !== null && schemes.includes(url.protocol) && url.hostname !== "" &&
      !url.username && !url.password;
  }, { error: `must be an absolute ${options.allowHttp ? "https or http" : "https"} URL` }).meta({
    format: "uri",
  });
}
