/**
 * Shared pieces of the header rules: how header names are shown in errors, the one reading of a
 * boolean header, the headers the interface says may be ignored, and what happens when such a
 * header is malformed (it is dropped before forwarding and logged, never rejected, unless the
 * policy says otherwise). An empty header is absent for every check (`requestHeaders()`).
 */
import { z } from "zod";
import type { GatewayContext, Mode, Report } from "../src/core/check.ts";
import type { Operation } from "../src/psd2/catalogue.ts";
import { dropHeader } from "../src/core/request.ts";
import { formatError, type GatewayError } from "../src/psd2/errors.ts";

export { UUID } from "../src/lib/ids.ts";

import { displayName } from "../src/bodies/headers.ts";

export { displayName };

/**
 * Headers the interface says "may be ignored" (000, common request headers). The document also
 * says ignorable headers never cause a rejection, so a malformed one is dropped, not rejected.
 */
export const IGNORABLE_HEADERS: ReadonlySet<string> = new Set([
  "tpp-decoupled-preferred",
  "tpp-nok-redirect-uri",
  "tpp-explicit-authorisation-preferred",
  "tpp-rejection-nofunds-preferred",
  "tpp-brand-logging-information",
  "tpp-notification-uri",
  "tpp-notification-content-preferred",
]);

/** The option of checks that judge ignorable headers. */
export function ignorableField() {
  return z.enum(["strip", "reject"]).default("strip").describe(
    "A malformed header the interface says may be ignored: strip (drop it before forwarding and log it; the interface says such headers never cause a rejection) or reject (400)",
  );
}

/** Whether the operation takes the header (catalogue, lower case). */
export function takes(op: Operation, name: string): boolean {
  return op.headers.includes(name);
}

/** Whether the operation requires the header (catalogue, lower case). */
export function requires(op: Operation, name: string): boolean {
  return op.required.includes(name);
}

/** 400 FORMAT_ERROR naming the header. */
export function headerError(name: string, text: string): GatewayError {
  return formatError(displayName(name), text);
}

/**
 * 400 FORMAT_ERROR for a required header that is absent; the text says so when it was sent with
 * an empty value (an empty header counts as absent).
 */
export function missingHeader(name: string, c: GatewayContext): GatewayError {
  const empty = c.req.raw.headers.has(name);
  return headerError(
    name,
    `Header "${displayName(name)}" is required for this operation${
      empty ? " (it was sent empty)" : ""
    }`,
  );
}

/**
 * A boolean header (TPP-Redirect-Preferred and the other TPP-*-Preferred flags): `true` or
 * `false` in any letter case, as Java-based banks (Boolean.valueOf) and the adorsys XS2A read
 * them; `undefined` for anything else. Every check reads flags with this one function.
 */
export function parseFlag(value: string | null): boolean | undefined {
  if (value === null || value.length > 5) return undefined;
  const lower = value.toLowerCase();
  return lower === "true" ? true : lower === "false" ? false : undefined;
}

/** How a check that judges ignorable headers is configured. */
export interface IgnorableOptions {
  mode: Mode;
  ignorable: "strip" | "reject";
}

/**
 * Handles a violation on one header: throws it, or, for an ignorable header under the `strip`
 * policy, reports it as a finding and (in enforce mode) drops the header from the forwarded
 * request. Returns true when the header was dropped.
 */
export function headerViolation(
  c: GatewayContext,
  check: { report: Report; options: IgnorableOptions },
  name: string,
  error: GatewayError,
): boolean {
  if (!IGNORABLE_HEADERS.has(name) || check.options.ignorable === "reject") throw error;
  const enforce = check.options.mode === "enforce";
  check.report(c, error, { dropped: enforce });
  if (enforce) dropHeader(c, name);
  return enforce;
}
