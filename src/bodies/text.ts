/**
 * Building blocks of the body schemas: objects that reject or let through unknown fields, free
 * text in the interface character set, dates and URLs, all with phrases for the error text.
 */
import { z } from "zod";
import { isIsoDate } from "../lib/dates.ts";

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
  return z.string().refine(isIsoDate, { error: "must be a date like 2025-12-31" });
}

/** An absolute https URL (http too when the policy allows it). */
export function absoluteUrl(options: BodyOptions) {
  const schemes = options.allowHttp ? ["https:", "http:"] : ["https:"];
  return z.string().max(2048).refine((value) => {
    if (!/^[!-~]+$/.test(value) || !/^https?:\/\/[^/?#]/i.test(value)) return false;
    const url = URL.parse(value);
    return url !== null && schemes.includes(url.protocol) && url.hostname !== "" &&
      !url.username && !url.password;
  }, { error: `must be an absolute ${options.allowHttp ? "https or http" : "https"} URL` });
}
