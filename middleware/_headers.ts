/**
 * Shared pieces of the header rules: how header names are shown in errors, the headers the
 * interface says may be ignored, and what happens when such a header is malformed (it is dropped
 * before forwarding and logged, never rejected, unless the policy says otherwise).
 */
import { z } from "zod";
import type { GatewayContext, Mode, Report } from "../src/core/check.ts";
import type { Operation } from "../src/core/catalogue.ts";
import { dropHeader } from "../src/core/request.ts";
import { formatError, type GatewayError } from "../src/core/errors.ts";

/** A UUID in its canonical 8-4-4-4-12 hexadecimal form (any version, either case). */
export const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

const NAMES = [
  "X-Request-ID",
  "Digest",
  "x-jws-signature",
  "Signature",
  "TPP-Signature-Certificate",
  "Authorization",
  "Content-Type",
  "Accept",
  "Consent-ID",
  "PSU-ID",
  "PSU-ID-Type",
  "PSU-Corporate-ID",
  "PSU-Corporate-ID-Type",
  "PSU-IP-Address",
  "PSU-IP-Port",
  "PSU-Accept",
  "PSU-Accept-Charset",
  "PSU-Accept-Encoding",
  "PSU-Accept-Language",
  "PSU-User-Agent",
  "PSU-Http-Method",
  "PSU-Device-ID",
  "PSU-Geo-Location",
  "TPP-Redirect-Preferred",
  "TPP-Decoupled-Preferred",
  "TPP-Redirect-URI",
  "TPP-Nok-Redirect-URI",
  "TPP-Explicit-Authorisation-Preferred",
  "TPP-Rejection-NoFunds-Preferred",
  "TPP-Brand-Logging-Information",
  "TPP-Notification-URI",
  "TPP-Notification-Content-Preferred",
];
const DISPLAY = new Map(NAMES.map((name) => [name.toLowerCase(), name]));

/** The header's name as the interface documents write it, for `path` and texts. */
export function displayName(name: string): string {
  return DISPLAY.get(name) ?? name.replace(/(^|-)([a-z])/g, (_, dash, c) => dash + c.toUpperCase());
}

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

/** 400 FORMAT_ERROR for a required header that is absent. */
export function missingHeader(name: string): GatewayError {
  return headerError(name, `Header "${displayName(name)}" is required for this operation`);
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
