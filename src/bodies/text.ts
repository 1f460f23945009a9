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
  /** Free text must stay within the interface character set. */
  charset: boolean;
  /** Largest number of payments in a bulk payment. */
  maxBulk: number;
  /** http URLs are accepted where https ones are expected (sandbox). */
  allowHttp: boolean;
}

/** The interface character set for strings (000, "What the service does"). */
export const INTERFACE_CHARSET = /^[a-zA-Z0-9/\-?:().,'+ ]*$/;

/** Longest list of account references or items accepted in a body. */
export const MAX_LIST = 1000;

/** A strict or loose object, as the policy says. */
export function object<Shape extends z.ZodRawShape>(shape: Shape, options: BodyOptions) {
  return options.unknown === "reject" ? z.strictObject(shape) : z.looseObject(shape);
}

/** Free text of at most `max` characters, in the interface character set when the policy says. */
export function text(max: number, options: BodyOptions) {
  const base = z.string().min(1).max(max);
  return options.charset
    ? base.regex(INTERFACE_CHARSET, {
      error: "must use only the interface character set: a-z A-Z 0-9 / - ? : ( ) . , ' + and space",
    })
    : base;
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
