/**
 * What a check is: a policy key, a zod options schema and a factory that builds the per-operation
 * middleware once at start-up (Envoy's filter factories, Kong's plugin schemas).
 *
 * @example
 * export const psuGeoLocation = defineCheck({
 *   key: "psu_geo_location",
 *   description: "PSU-Geo-Location must look like GEO:<lat>;<long>",
 *   options: modal({}),
 *   create: () => (c, next) => { ...; return next(); },
 * });
 */
import { z } from "zod";
import type { Context, MiddlewareHandler } from "hono";
import type { Operation } from "./catalogue.ts";
import type { Services } from "./services.ts";
import type { PolicySections } from "../policy/sections.ts";
import type { Bytes } from "../lib/body.ts";
import type { HeaderPairs } from "../lib/header_pairs.ts";
import type { DecisionOutcome } from "../store/types.ts";
import type { CertificateInfo } from "../pki/certificate.ts";
import type { Terminators } from "../pki/terminators.ts";

/** How a check acts on a violation: reject, log and forward, or not run at all. */
export const MODES = ["enforce", "report", "off"] as const;
export type Mode = typeof MODES[number];

/** A rule violation seen by a check, rejected (enforce) or only reported. */
export interface Finding {
  check: string;
  mode: Mode;
  status: number;
  code: string;
  path?: string;
  text: string;
  /** True when the offending header was dropped from the forwarded request instead. */
  dropped?: boolean;
}

/** The TPP calling, once a check has established it. */
export interface TppIdentity {
  /** The TPP id (organizationIdentifier, or the token's client id). */
  id: string;
  /** PSD2 roles, for example `PSP_PI`. */
  roles: string[];
  /** DNS names of the TPP's certificate (CN and SubjectAltName). */
  domains: string[];
}

/** A rewrite of a JSON response text; `undefined` means unchanged. */
export type ResponseFilter = (text: string) => string | undefined;

/** Per-request values that checks share, in Hono's context variables. */
export interface GatewayVariables {
  /** The operation this request was routed to. */
  op: Operation;
  /** The path parameters, decoded. */
  params: Record<string, string>;
  /** The X-Request-ID header as sent ("" when absent). */
  requestId: string;
  /** The request body, read once with the size limit (empty until `body_limit` ran). */
  body: Bytes;
  /** Violations seen so far, for the access log. */
  findings: Finding[];
  /** The calling TPP, when known. */
  tpp?: TppIdentity;
  /** True when PSU-IP-Address is present and valid: the PSU initiated the request. */
  psuInitiated: boolean;
  /** Request headers (lower case) the proxy must not forward, for example a malformed ignorable one. */
  dropHeaders?: Set<string>;
  /** A write failed after it may have reached the upstream: its outcome is unknown. */
  outcomeUnknown?: boolean;
  /** Upstream status and latency, once the proxy ran. */
  upstream?: { status: number; ms: number };
  /** The connection peer's address ("" when unknown), once `peerAddress()` ran. */
  peerAddress?: string;
  /** The client's address ("" when unknown), once `clientAddress()` ran. */
  clientAddress?: string;
  /** The policy's TLS terminators (`trust.terminators`), set by the app for every request. */
  terminators?: Terminators;
  /** The request headers read once, when `requestHeaders()` or `headerList()` first ran. */
  headerLookup?: HeaderPairs;
  /** The request body parsed as JSON, once `jsonBody()` ran. */
  json?: unknown;
  /**
   * Rewrites of the upstream's JSON answer, applied in order by the proxy before it builds the
   * response (Envoy's encoder filters); each returns the new text or `undefined` for no change.
   */
  responseFilters?: ResponseFilter[];
  /** The TPP's transport certificate, once `tpp_certificate` verified it. */
  tppCertificate?: CertificateInfo;
  /** True once the Digest header was checked against the body bytes. */
  digestVerified?: boolean;
  /** The shared-state decision of this request, asked of the store once (src/shared_state.ts). */
  decision?: Promise<DecisionOutcome>;
  /** Headers of the answer decided before it exists; see {@link answerHeader}. */
  answerHeaders?: [string, string][];
  /** The response the proxy built, with the answer headers already in it. */
  proxied?: Response;
}

export type GatewayEnv = { Variables: GatewayVariables };
export type GatewayContext = Context<GatewayEnv>;
export type Middleware = MiddlewareHandler<GatewayEnv>;

/** What a factory gets besides its options. */
export interface BuildContext {
  operation: Operation;
  services: Services;
  /** The policy's global sections (upstream, store, ...). */
  sections: PolicySections;
}

/** A check: policy key, options schema and factory. */
export interface Check<Shape extends z.ZodRawShape = z.ZodRawShape> {
  /** The policy key, also the module and test file stem. */
  key: string;
  /** One line for `policy:explain` and the README. */
  description: string;
  /** Options; no refinements here (levels are validated field by field). */
  options: z.ZodObject<Shape>;
  /** Cross-field rules on the resolved options; each returned string is one problem. */
  validate?(options: z.output<z.ZodObject<Shape>>): string[];
  /** Builds the middleware for one operation, or `undefined` when the check does not apply. */
  create(
    options: z.output<z.ZodObject<Shape>>,
    context: BuildContext,
  ): Middleware | undefined;
}

/** Declares a check (identity function that keeps the option types). */
export function defineCheck<Shape extends z.ZodRawShape>(check: Check<Shape>): Check<Shape> {
  return check;
}

/** The `mode` field every check has. */
export function modeField(fallback: Mode = "enforce") {
  return z.enum(MODES).default(fallback).describe(
    "enforce: reject violations; report: log them and forward; off: do not run",
  );
}

/** An options object with a `mode` field in front. */
export function modal<Shape extends z.ZodRawShape>(shape: Shape, fallback: Mode = "enforce") {
  return z.object({ mode: modeField(fallback), ...shape }).strict();
}
